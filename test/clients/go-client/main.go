// sentry-go reporting to Lookout (test/sentry-clients.test.ts): an error, or a panic through sentry.Recover.
// usage: go-client <dsn> <error|panic|storm|cron> <tag>
// storm: five errors, each sent and flushed in turn (test/admission.test.ts counts what reaches the server)
// cron: a cron monitor's run checked in with CaptureCheckIn, in progress then ok, the monitor's config with both
package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/getsentry/sentry-go"
)

func reserveStock(sku string, quantity int) error {
	if quantity > 3 {
		return fmt.Errorf("reserve %s: %w", sku, errors.New("out of stock"))
	}
	return nil
}

func shipOrder(items []string) string {
	return items[len(items)] // panics: index out of range
}

func main() {
	dsn, scenario, tag := os.Args[1], os.Args[2], os.Args[3]
	err := sentry.Init(sentry.ClientOptions{Dsn: dsn, Release: "shop@4.1.0", Environment: "production", AttachStacktrace: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer sentry.Flush(10 * time.Second)
	sentry.ConfigureScope(func(scope *sentry.Scope) {
		scope.SetTag("scenario", tag)
		scope.SetUser(sentry.User{ID: "10", Email: "go@example.com"})
	})
	sentry.AddBreadcrumb(&sentry.Breadcrumb{Category: "cart", Message: "go breadcrumb"})
	switch scenario {
	case "error":
		sentry.CaptureException(reserveStock("sku-1", 5))
	case "storm":
		for i := 1; i <= 5; i++ {
			sentry.CaptureException(fmt.Errorf("storm error %d", i))
			sentry.Flush(5 * time.Second)
		}
	case "cron":
		config := &sentry.MonitorConfig{Schedule: sentry.CrontabSchedule("*/5 * * * *"), CheckInMargin: 2, MaxRuntime: 10, Timezone: "America/New_York"}
		id := sentry.CaptureCheckIn(&sentry.CheckIn{MonitorSlug: tag, Status: sentry.CheckInStatusInProgress}, config)
		sentry.CaptureCheckIn(&sentry.CheckIn{ID: *id, MonitorSlug: tag, Status: sentry.CheckInStatusOK, Duration: 2 * time.Second}, config)
	case "panic":
		func() {
			defer func() {
				if r := recover(); r != nil {
					sentry.CurrentHub().Recover(r)
				}
			}()
			shipOrder([]string{"a"})
		}()
	}
}
