# comment

0 0
100 0.5
200 0.9
