module example.com/counts

go 1.19
