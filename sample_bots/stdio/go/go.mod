module elfern.example/gobot

go 1.19
