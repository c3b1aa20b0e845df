package main

// The embedded store's online backup (issue 71).
//
// `-snapshot FROM -to TO` copies the SQLite database file FROM, which FerretDB keeps writing, as one consistent
// whole (VACUUM INTO reads it in one transaction, and in WAL mode a reader blocks no writer), writes the copy to TO
// compressed (zstd), and prints how many documents each collection of the copy holds. Lookout runs it at the
// lowest CPU priority, so the copy takes what ingestion leaves.
//
// `-unpack FROM -to TO` decompresses such a copy into the SQLite file TO and prints the same counts (a restore
// checks them against the backup's manifest before it writes anything).

import (
	"bufio"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/klauspost/compress/zstd"
	_ "modernc.org/sqlite"
)

// FerretDB v1's list of collections and the table that holds each (internal/backends/sqlite/metadata).
const collectionsTable = "_ferretdb_collections"

func snapshot(from, to string) error {
	raw := to + ".sqlite"
	_ = os.Remove(raw) // one a killed backup left: VACUUM INTO writes only into a new file
	defer os.Remove(raw)
	db, err := sql.Open("sqlite", "file:"+from+"?mode=rw&_pragma=busy_timeout(10000)")
	if err != nil {
		return err
	}
	db.SetMaxOpenConns(1) // one connection: the pragmas below hold for the statement between them
	// The copy is a scratch file, compressed and deleted at once: not synced (synchronous OFF), since its hundreds of
	// megabytes went to disk in one flush that held FerretDB's commits (their fsyncs) for a tenth of a second. FULL
	// again before the connection closes: a close may checkpoint the store's own WAL, which must be synced.
	_, err = db.Exec("PRAGMA synchronous = OFF")
	if err == nil {
		_, err = db.Exec("VACUUM INTO ?", raw)
	}
	if _, restore := db.Exec("PRAGMA synchronous = FULL"); err == nil {
		err = restore
	}
	db.Close()
	if err != nil {
		return fmt.Errorf("copying %s: %w", from, err)
	}
	counts, err := count(raw)
	if err != nil {
		return err
	}
	if err := convert(raw, to, true); err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(map[string]any{"collections": counts})
}

func unpack(from, to string) error {
	if err := convert(from, to, false); err != nil {
		return err
	}
	return printCount(to)
}

// convert writes zstd(from), or its inverse, to `to`. zstd's default level: on these pages (error events hold their
// payloads deflated, in base64) it makes files a sixth smaller than gzip's default at a sixth of its CPU.
func convert(from, to string, compressing bool) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	defer out.Close()
	buffered := bufio.NewWriterSize(out, 1<<20)
	if compressing {
		zw, err := zstd.NewWriter(buffered, zstd.WithEncoderLevel(zstd.SpeedDefault))
		if err != nil {
			return err
		}
		if _, err := io.Copy(zw, in); err != nil {
			return err
		}
		if err := zw.Close(); err != nil {
			return err
		}
	} else {
		zr, err := zstd.NewReader(bufio.NewReaderSize(in, 1<<20))
		if err != nil {
			return err
		}
		defer zr.Close()
		if _, err := io.Copy(buffered, zr); err != nil {
			return fmt.Errorf("%s is damaged: %w", from, err)
		}
	}
	if err := buffered.Flush(); err != nil {
		return err
	}
	return out.Close() // not synced: Lookout syncs the backup file it writes from this one
}

func count(file string) (map[string]int64, error) {
	db, err := sql.Open("sqlite", "file:"+file+"?mode=ro")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.Query(fmt.Sprintf("SELECT name, table_name FROM %q", collectionsTable))
	if err != nil {
		return nil, fmt.Errorf("%s is not a FerretDB database: %w", file, err)
	}
	tables := map[string]string{}
	for rows.Next() {
		var name, table string
		if err := rows.Scan(&name, &table); err != nil {
			return nil, err
		}
		tables[name] = table
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}
	counts := map[string]int64{}
	for name, table := range tables {
		var n int64
		if err := db.QueryRow(fmt.Sprintf("SELECT count(*) FROM %q", table)).Scan(&n); err != nil {
			return nil, fmt.Errorf("counting %s: %w", name, err)
		}
		counts[name] = n
	}
	return counts, nil
}

func printCount(file string) error {
	counts, err := count(file)
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(map[string]any{"collections": counts})
}
