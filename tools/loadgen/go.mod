module lookout/loadgen

go 1.22
