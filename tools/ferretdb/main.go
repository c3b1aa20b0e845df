// Command ferretdb-embedded runs FerretDB v1 through its embeddable package.
//
// The upstream `go install .../cmd/ferretdb` binary panics at start because it
// expects version files produced by FerretDB's own build; the embeddable
// package has no such need. Telemetry is disabled by the package itself.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	_ "net/http/pprof"
	"os"
	"os/signal"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	listen := flag.String("listen-addr", "127.0.0.1:27017", "TCP address to listen on")
	handler := flag.String("handler", "sqlite", "backend handler: sqlite or postgresql")
	sqliteURL := flag.String("sqlite-url", "file:data/", "SQLite directory URI (sqlite handler)")
	postgresURL := flag.String("postgresql-url", "", "PostgreSQL URL (postgresql handler)")
	logLevel := flag.String("log-level", "warn", "debug, info, warn or error")
	debugAddr := flag.String("debug-addr", "", "address for Go's profiling handlers (/debug/pprof/); off when empty")
	snapshotFrom := flag.String("snapshot", "", "copy this SQLite database file (to -to) and exit: snapshot.go")
	snapshotTo := flag.String("to", "", "where -snapshot and -unpack write")
	unpackFrom := flag.String("unpack", "", "decompress this snapshot (to -to) and exit: snapshot.go")
	flag.Parse()

	if *snapshotFrom != "" || *unpackFrom != "" {
		var err error
		if *snapshotFrom != "" {
			err = snapshot(*snapshotFrom, *snapshotTo)
		} else {
			err = unpack(*unpackFrom, *snapshotTo)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "ferretdb: %s\n", err)
			os.Exit(1)
		}
		return
	}

	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		fmt.Fprintf(os.Stderr, "bad -log-level: %s\n", err)
		os.Exit(2)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	f, err := ferretdb.New(&ferretdb.Config{
		Listener:      ferretdb.ListenerConfig{TCP: *listen},
		Logger:        logger,
		Handler:       *handler,
		SQLiteURL:     *sqliteURL,
		PostgreSQLURL: *postgresURL,
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "ferretdb: %s\n", err)
		os.Exit(1)
	}

	if *debugAddr != "" {
		go func() {
			if err := http.ListenAndServe(*debugAddr, nil); err != nil {
				logger.Warn("debug listener stopped", "err", err)
			}
		}()
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	// The parent process waits for this line before connecting.
	fmt.Printf("ready %s\n", f.MongoDBURI())

	if err := f.Run(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "ferretdb: %s\n", err)
		os.Exit(1)
	}
}
