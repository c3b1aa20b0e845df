// sentry-go reporting to Lookout (test/sentry-clients.test.ts): an error, or a panic through sentry.Recover.
// usage: go-client <dsn> <error|panic|storm|cron|traces> <tag>
// storm: five errors, each sent and flushed in turn (test/admission.test.ts counts what reaches the server)
// cron: a cron monitor's run checked in with CaptureCheckIn, in progress then ok, the monitor's config with both
// traces: tracing on; ten transactions of one route, each with a query, and one that fails with an error captured in
// it; what the SDK sent is printed as JSON (BeforeSendTransaction notes it) for the test to compute from
package main

import (
	"context"
	"encoding/json"
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
	var sent []map[string]any
	options := sentry.ClientOptions{Dsn: dsn, Release: "shop@4.1.0", Environment: "production", AttachStacktrace: true}
	if scenario == "traces" {
		options.EnableTracing = true
		options.TracesSampleRate = 1
		options.BeforeSendTransaction = func(event *sentry.Event, _ *sentry.EventHint) *sentry.Event {
			trace := event.Contexts["trace"]
			sent = append(sent, map[string]any{"name": event.Transaction, "start": event.StartTime, "end": event.Timestamp, "status": trace["status"], "trace_id": trace["trace_id"]})
			return event
		}
	}
	err := sentry.Init(options)
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
	case "traces":
		for i := 0; i < 10; i++ {
			tx := sentry.StartTransaction(context.Background(), "GET /orders/{id}", sentry.WithOpName("http.server"), sentry.WithTransactionSource(sentry.SourceRoute))
			span := tx.StartChild("db.query", sentry.WithDescription(fmt.Sprintf("SELECT * FROM orders WHERE id = %d", i)))
			time.Sleep(2 * time.Millisecond)
			span.Finish()
			time.Sleep(time.Duration(i%4) * 5 * time.Millisecond)
			tx.Finish()
		}
		hub := sentry.CurrentHub().Clone()
		tx := sentry.StartTransaction(sentry.SetHubOnContext(context.Background(), hub), "POST /checkout", sentry.WithOpName("http.server"), sentry.WithTransactionSource(sentry.SourceRoute))
		hub.Scope().SetSpan(tx)
		hub.CaptureException(errors.New("payment refused " + tag))
		tx.Status = sentry.SpanStatusInternalError
		tx.Finish()
		sentry.Flush(10 * time.Second)
		out, _ := json.Marshal(sent)
		fmt.Println(string(out))
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
