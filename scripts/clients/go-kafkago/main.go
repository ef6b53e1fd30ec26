// kafka-go (github.com/segmentio/kafka-go) producer and group consumer for the issue-35
// captures (samples/issue35-*.pcap, made by scripts/make-samples-issue35.sh). kafka-go
// announces no client software name in ApiVersions and does not say which API versions it
// picks, so every connection is wrapped and each frame it writes or reads is logged.
//
//	go-kafkago SEEDS producer NAME CLIENT_ID TOPIC RATE SECONDS
//	go-kafkago SEEDS consumer NAME CLIENT_ID GROUP TOPIC SECONDS
//
// Every line on stdout is one JSON object in the NDJSON schema of samples/README.md ("issue
// 35"): ts_ns (wall clock in ns, the clock of tcpdump's timestamps), client (NAME), client_id,
// event. "request" / "response" lines carry api_key, api_version, correlation_id, local_port and
// the frame size; the producer logs one "delivered" line per record (from Writer.Completion:
// partition and offset), the consumer one "received" line per record, "assigned" when the
// Reader subscribes to its partitions (parsed from its log line), "log" for the Reader's other
// log lines (joins, generations, commits), and "stats" once a second (Reader.Stats: offset,
// lag, counts).
package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
)

var (
	name, clientID string
	outMu          sync.Mutex
)

func emit(event string, kv ...any) {
	m := map[string]any{"ts_ns": time.Now().UnixNano(), "client": name, "client_id": clientID, "event": event}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	outMu.Lock()
	defer outMu.Unlock()
	os.Stdout.Write(append(b, '\n'))
}

// wireConn logs the header of every Kafka frame written and read on one connection.
type wireConn struct {
	net.Conn
	mu      sync.Mutex
	out, in []byte
	keys    map[int32][2]int16
}

func (w *wireConn) port() int {
	if a, ok := w.Conn.LocalAddr().(*net.TCPAddr); ok {
		return a.Port
	}
	return 0
}

func (w *wireConn) Write(p []byte) (int, error) {
	n, err := w.Conn.Write(p)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.out = append(w.out, p[:n]...)
	for len(w.out) >= 4 {
		size := int(binary.BigEndian.Uint32(w.out))
		if len(w.out) < 4+size {
			break
		}
		f := w.out[4 : 4+size]
		if size >= 8 {
			key, ver := int16(binary.BigEndian.Uint16(f)), int16(binary.BigEndian.Uint16(f[2:]))
			corr := int32(binary.BigEndian.Uint32(f[4:]))
			w.keys[corr] = [2]int16{key, ver}
			emit("request", "api_key", key, "api_version", ver, "correlation_id", corr, "broker",
				w.Conn.RemoteAddr().String(), "local_port", w.port(), "bytes", 4+size)
		}
		w.out = w.out[4+size:]
	}
	return n, err
}

func (w *wireConn) Read(p []byte) (int, error) {
	n, err := w.Conn.Read(p)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.in = append(w.in, p[:n]...)
	for len(w.in) >= 4 {
		size := int(binary.BigEndian.Uint32(w.in))
		if len(w.in) < 4+size {
			break
		}
		if size >= 4 {
			corr := int32(binary.BigEndian.Uint32(w.in[4:]))
			kv, ok := w.keys[corr]
			delete(w.keys, corr)
			var key, ver any
			if ok {
				key, ver = kv[0], kv[1]
			}
			emit("response", "api_key", key, "api_version", ver, "correlation_id", corr, "local_port", w.port(),
				"bytes", 4+size)
		}
		w.in = w.in[4+size:]
	}
	return n, err
}

func dial(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := (&net.Dialer{Timeout: 10 * time.Second}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	emit("connect", "broker", addr, "local_port", c.LocalAddr().(*net.TCPAddr).Port)
	return &wireConn{Conn: c, keys: map[int32][2]int16{}}, nil
}

var partRe = regexp.MustCompile(`topic:(\S+) partition:(\d+)\}:(-?\d+)`)

// logger turns the Reader's log lines into "log" events, and its "subscribed to topics and
// partitions" line into an "assigned" event.
type logger struct{ group, level string }

func (l logger) Printf(format string, args ...any) {
	msg := strings.TrimSpace(fmt.Sprintf(format, args...))
	if strings.HasPrefix(msg, "subscribed to topics and partitions:") {
		var parts [][]any
		offsets := map[string]int64{}
		for _, m := range partRe.FindAllStringSubmatch(msg, -1) {
			p, _ := strconv.Atoi(m[2])
			o, _ := strconv.ParseInt(m[3], 10, 64)
			parts = append(parts, []any{m[1], p})
			offsets[m[2]] = o
		}
		sort.Slice(parts, func(i, j int) bool { return parts[i][1].(int) < parts[j][1].(int) })
		emit("assigned", "group", l.group, "protocol", "classic", "partitions", parts, "start_offsets", offsets,
			"text", msg)
		return
	}
	emit("log", "level", l.level, "text", msg)
}

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: go-kafkago SEEDS producer NAME CLIENT_ID TOPIC RATE SECONDS | consumer NAME CLIENT_ID GROUP TOPIC SECONDS")
		os.Exit(2)
	}
	seeds := strings.Split(os.Args[1], ",")
	var err error
	switch a := os.Args[2:]; {
	case a[0] == "producer" && len(a) == 6:
		name, clientID = a[1], a[2]
		err = producer(seeds, a[3], atof(a[4]), atof(a[5]))
	case a[0] == "consumer" && len(a) == 6:
		name, clientID = a[1], a[2]
		err = consumer(seeds, a[3], a[4], atof(a[5]))
	default:
		err = fmt.Errorf("bad arguments %q", a)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAILED: %v\n", err)
		os.Exit(1)
	}
}

func atof(s string) float64 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		panic(err)
	}
	return f
}

func started(role string, conf map[string]any) {
	emit("started", "role", role, "software", "kafka-go", "version", "v0.4.51", "config", conf)
}

func producer(seeds []string, topic string, rate, secs float64) error {
	started("producer", map[string]any{"required_acks": "all", "batch_timeout_ms": 20, "balancer": "hash",
		"topic": topic})
	sent := sync.Map{} // i -> sent_ns
	w := &kafka.Writer{
		Addr:         kafka.TCP(seeds...),
		Topic:        topic,
		Balancer:     &kafka.Hash{},
		RequiredAcks: kafka.RequireAll,
		BatchTimeout: 20 * time.Millisecond,
		Async:        true,
		Transport:    &kafka.Transport{ClientID: clientID, Dial: dial},
		Completion: func(msgs []kafka.Message, err error) {
			for _, m := range msgs {
				i, _ := strconv.Atoi(strings.TrimPrefix(string(m.Value), "issue35 i="))
				s, _ := sent.Load(i)
				var e any
				offset := any(m.Offset)
				if err != nil {
					e, offset = err.Error(), nil
				}
				emit("delivered", "topic", topic, "partition", m.Partition, "offset", offset, "i", i, "key",
					string(m.Key), "sent_ns", s, "timestamp_ms", m.Time.UnixMilli(), "error", e)
			}
		},
	}
	end := time.Now().Add(time.Duration(secs * float64(time.Second)))
	gap := time.Duration(float64(time.Second) / rate)
	next := time.Now()
	i := 0
	for ; time.Now().Before(end); i++ {
		sent.Store(i, time.Now().UnixNano())
		m := kafka.Message{Key: []byte(fmt.Sprintf("k-%d", i%24)), Value: []byte(fmt.Sprintf("issue35 i=%d", i)),
			Time: time.Now()}
		if err := w.WriteMessages(context.Background(), m); err != nil {
			emit("error", "i", i, "error", err.Error())
		}
		next = next.Add(gap)
		time.Sleep(time.Until(next))
	}
	emit("flushing", "produced", i)
	err := w.Close()
	emit("closed", "produced", i, "error", fmt.Sprint(err))
	return nil
}

func consumer(seeds []string, group, topic string, secs float64) error {
	started("consumer", map[string]any{"group": group, "topic": topic, "session_timeout_ms": 6000,
		"heartbeat_interval_ms": 1000, "commit_interval_ms": 1000, "balancer": "range", "start_offset": "first"})
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers:           seeds,
		GroupID:           group,
		Topic:             topic,
		Dialer:            &kafka.Dialer{ClientID: clientID, Timeout: 10 * time.Second, DialFunc: dial},
		SessionTimeout:    6 * time.Second,
		HeartbeatInterval: time.Second,
		CommitInterval:    time.Second,
		StartOffset:       kafka.FirstOffset,
		GroupBalancers:    []kafka.GroupBalancer{kafka.RangeGroupBalancer{}},
		MaxWait:           500 * time.Millisecond,
		Logger:            logger{group: group, level: "info"},
		ErrorLogger:       logger{group: group, level: "error"},
	})
	emit("subscribed", "group", group, "protocol", "classic", "topics", []string{topic})
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(secs*float64(time.Second)))
	defer cancel()
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				s := r.Stats()
				emit("stats", "group", group, "offset", s.Offset, "lag", s.Lag, "messages", s.Messages,
					"fetches", s.Fetches, "rebalances", s.Rebalances, "partition", s.Partition)
			}
		}
	}()
	n := 0
	for {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			break
		}
		i, _ := strconv.Atoi(strings.TrimPrefix(string(m.Value), "issue35 i="))
		emit("received", "topic", m.Topic, "partition", m.Partition, "offset", m.Offset, "key", string(m.Key),
			"timestamp_ms", m.Time.UnixMilli(), "i", i)
		n++
		if err := r.CommitMessages(context.Background(), m); err != nil {
			emit("error", "error", err.Error())
		}
	}
	close(done)
	emit("closing", "group", group, "received", n)
	err := r.Close()
	emit("closed", "group", group, "error", fmt.Sprint(err))
	return nil
}
