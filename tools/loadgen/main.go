// The storm's load generator (bench/storm.ts): error events sent open loop, on a timetable whatever the answers do,
// over keep-alive connections, one request at a time on each, as an SDK's transport holds them. It shares the host's
// two cores with the stack it measures, so it is written to cost little: the same load from Node took 50–75% of a
// core at 6,000 requests a second and fell behind its own timetable (docs/performance.md).
//
// The plan comes as JSON on stdin. "phase N" goes to stderr as phase N starts (and "phase <count>" when sending is
// over); once every request is answered or has given up, one line per request goes to stdout, tab-separated: due
// (ms from the start), phase, sender index, status (0: no answer), ms from due to answer, ms waited for a
// connection (NaN: never had one), 1 when it opened a new connection, the refusal's reason or the failure's code.
// A last line "late" holds, per phase, the p99 of how late requests were handed to a connection past their due.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

type sender struct {
	NativeHead   string   `json:"native_head"`
	EnvelopePath string   `json:"envelope_path"`
	EnvelopeHead string   `json:"envelope_head"`
	Templates    []string `json:"templates"`
}

type phase struct {
	Seconds float64   `json:"seconds"`
	Rates   []float64 `json:"rates"`
}

type plan struct {
	URL        string   `json:"url"`
	MaxSockets int      `json:"max_sockets"`
	TimeoutMs  int      `json:"timeout_ms"`
	SeqStart   int      `json:"seq_start"`
	Senders    []sender `json:"senders"`
	Phases     []phase  `json:"phases"`
}

type record struct {
	due, ms, connectMs float64
	phase, from        int
	status             int
	fresh              bool
	reason             string
}

type request struct {
	rec      *record
	text     []byte
	queuedAt time.Time
}

// the event_id in each template, replaced per request
const placeholder = "00000000000000000000000000000000"

var (
	start      = time.Now()
	reasonText = regexp.MustCompile(`"reason":"([^"]*)"`)
)

func since(t time.Time) float64 { return float64(t.Sub(start).Nanoseconds()) / 1e6 }

// pool: one sender's connections (each sender is its own application: no connection is shared between them)
type pool struct {
	addr    string
	max     int32
	timeout time.Duration
	queue   chan *request
	open    atomic.Int32
	idle    atomic.Int32
	pending *sync.WaitGroup
}

func (p *pool) send(r *request) {
	p.pending.Add(1)
	p.queue <- r
	// a new connection only when none is free, as an SDK's transport opens one
	if p.idle.Load() == 0 {
		p.grow()
	}
}

func (p *pool) grow() {
	for {
		n := p.open.Load()
		if n >= p.max {
			return
		}
		if p.open.CompareAndSwap(n, n+1) {
			go p.serve()
			return
		}
	}
}

func (p *pool) answer(r *request, status int, reason string) {
	r.rec.status = status
	r.rec.reason = reason
	r.rec.ms = since(time.Now()) - r.rec.due
	p.pending.Done()
}

func failure(err error) string {
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		return "CLIENT_TIMEOUT"
	case errors.Is(err, syscall.ECONNRESET):
		return "ECONNRESET"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "ECONNREFUSED"
	case errors.Is(err, syscall.EPIPE):
		return "EPIPE"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "CLOSED"
	}
	return "ERROR"
}

// serve: one connection, requests one after another until it fails or the server closes it
func (p *pool) serve() {
	defer func() {
		p.open.Add(-1)
		// a request still waiting takes this connection's place
		if len(p.queue) > 0 {
			p.grow()
		}
	}()
	conn, err := net.DialTimeout("tcp", p.addr, p.timeout)
	if err != nil {
		select {
		case r := <-p.queue:
			p.answer(r, 0, failure(err))
		default:
		}
		return
	}
	defer conn.Close()
	conn.(*net.TCPConn).SetNoDelay(true)
	in := bufio.NewReaderSize(conn, 4096)
	fresh := true
	for {
		p.idle.Add(1)
		r := <-p.queue
		p.idle.Add(-1)
		now := time.Now()
		r.rec.connectMs = float64(now.Sub(r.queuedAt).Nanoseconds()) / 1e6
		r.rec.fresh = fresh
		fresh = false
		conn.SetDeadline(now.Add(p.timeout))
		if _, err := conn.Write(r.text); err != nil {
			p.answer(r, 0, failure(err))
			return
		}
		res, err := http.ReadResponse(in, nil)
		if err != nil {
			p.answer(r, 0, failure(err))
			return
		}
		reason := ""
		if res.StatusCode == 429 || res.StatusCode == 503 {
			body, _ := io.ReadAll(res.Body)
			reason = "?"
			if m := reasonText.FindSubmatch(body); m != nil {
				reason = string(m[1])
			}
		} else if _, err := io.Copy(io.Discard, res.Body); err != nil {
			p.answer(r, 0, failure(err))
			return
		}
		res.Body.Close()
		p.answer(r, res.StatusCode, reason)
		if res.Close {
			return
		}
	}
}

// text: the i-th request of a sender, a native event (even) or an envelope with one event (odd), with event_id seq
func text(host string, s *sender, i, seq int) []byte {
	id := fmt.Sprintf("%032x", seq)
	payload := strings.Replace(s.Templates[i%len(s.Templates)], placeholder, id, 1)
	path, head, body := "/api/v1/events", s.NativeHead, payload
	if i%2 == 1 {
		path, head = s.EnvelopePath, s.EnvelopeHead
		body = `{"event_id":"` + id + `"}` + "\n" + `{"type":"event","length":` + strconv.Itoa(len(payload)) + "}\n" + payload + "\n"
	}
	return []byte("POST " + path + " HTTP/1.1\r\nHost: " + host + "\r\n" + head + "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body)
}

func p99(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	sort.Float64s(xs)
	return xs[min(len(xs)-1, int(0.99*float64(len(xs))))]
}

func main() {
	var pl plan
	if err := json.NewDecoder(os.Stdin).Decode(&pl); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen: a plan on stdin:", err)
		os.Exit(2)
	}
	target, err := url.Parse(pl.URL)
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadgen: url:", err)
		os.Exit(2)
	}
	total := 0
	for _, ph := range pl.Phases {
		for _, rate := range ph.Rates {
			total += int(ph.Seconds * rate)
		}
	}
	var pending sync.WaitGroup
	pools := make([]*pool, len(pl.Senders))
	for s := range pools {
		pools[s] = &pool{addr: target.Host, max: int32(pl.MaxSockets), timeout: time.Duration(pl.TimeoutMs) * time.Millisecond, queue: make(chan *request, total+1), pending: &pending}
	}
	records := make([]*record, 0, total)
	late := make([]float64, 0, len(pl.Phases))
	start = time.Now()
	phaseStart := 0.0
	for n, ph := range pl.Phases {
		fmt.Fprintf(os.Stderr, "phase %d\n", n)
		next := make([]int, len(pl.Senders))
		phaseEnd := phaseStart + ph.Seconds*1000
		var lateness []float64
		for {
			now := since(time.Now())
			if now >= phaseEnd {
				break
			}
			elapsed := now - phaseStart
			for s := range pl.Senders {
				rate := ph.Rates[s]
				// request k is due at k / rate: sent by the first pass at or after that
				for rate > 0 && next[s] <= int(math.Floor(elapsed/1000*rate)) && next[s] < int(ph.Seconds*rate) {
					k := next[s]
					next[s]++
					due := phaseStart + float64(k)/rate*1000
					rec := &record{due: due, phase: n, from: s, connectMs: math.NaN()}
					records = append(records, rec)
					i := len(records)
					t := text(target.Host, &pl.Senders[s], i, pl.SeqStart+i)
					sent := time.Now()
					lateness = append(lateness, since(sent)-due)
					pools[s].send(&request{rec: rec, text: t, queuedAt: sent})
				}
			}
			time.Sleep(time.Millisecond)
		}
		late = append(late, p99(lateness))
		phaseStart = phaseEnd
	}
	fmt.Fprintf(os.Stderr, "phase %d\n", len(pl.Phases))
	pending.Wait()
	out := bufio.NewWriterSize(os.Stdout, 1<<16)
	for _, r := range records {
		fresh := 0
		if r.fresh {
			fresh = 1
		}
		fmt.Fprintf(out, "%.3f\t%d\t%d\t%d\t%.3f\t%.3f\t%d\t%s\n", r.due, r.phase, r.from, r.status, r.ms, r.connectMs, fresh, r.reason)
	}
	fmt.Fprint(out, "late")
	for _, l := range late {
		fmt.Fprintf(out, "\t%.1f", l)
	}
	fmt.Fprintln(out)
	out.Flush()
}
