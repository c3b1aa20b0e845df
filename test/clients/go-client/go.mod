module lookout.test/go-client

go 1.23.0

require github.com/getsentry/sentry-go v0.40.0

require (
	golang.org/x/sys v0.18.0 // indirect
	golang.org/x/text v0.14.0 // indirect
)
