# point masses: half exactly 1000 B, rest uniform 1000..3000, then a point mass at 3000
1000 0
1000 0.5
3000 0.75
3000 1
