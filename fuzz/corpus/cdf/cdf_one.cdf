# only one point
0 0
