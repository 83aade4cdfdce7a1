# name: test
0 0
abc 0.5
100 1
