# sizes must not decrease
100 0
5000 0.5
3000 0.8
90000 1
