package main

// The franz-go side of the issue-35 captures (samples/issue35-*.pcap, made by
// scripts/make-samples-issue35.sh):
//
//	go-franz SEEDS issue35 producer NAME CLIENT_ID TOPIC RATE SECONDS
//	go-franz SEEDS issue35 consumer NAME CLIENT_ID GROUP TOPIC classic|consumer SECONDS
//
// Every line on stdout is one JSON object in the NDJSON schema of samples/README.md ("issue
// 35"): ts_ns (wall clock in nanoseconds, the clock of tcpdump's timestamps), client (NAME),
// client_id, event. The producer writes one "delivered" line per record (sent_ns, partition,
// offset); the consumer one "received" line per record, "assigned" / "revoked" / "lost" from
// the group callbacks, "committed" from the auto-commit callback (every second), and once a
// second "stats": per partition the position (next offset to consume), the high watermark and
// last stable offset of the latest Fetch answer for it, and their difference (lag).

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

type i35 struct {
	name, clientID string
	mu             sync.Mutex
}

func (l *i35) emit(event string, kv ...any) {
	m := map[string]any{"ts_ns": time.Now().UnixNano(), "client": l.name, "client_id": l.clientID, "event": event}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	os.Stdout.Write(append(b, '\n'))
}

func tpList(m map[string][]int32) [][]any {
	out := [][]any{}
	topics := make([]string, 0, len(m))
	for t := range m {
		topics = append(topics, t)
	}
	sort.Strings(topics)
	for _, t := range topics {
		ps := append([]int32(nil), m[t]...)
		sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
		for _, p := range ps {
			out = append(out, []any{t, p})
		}
	}
	return out
}

func issue35(seeds string, args []string) error {
	if len(args) < 1 {
		return fmt.Errorf("usage: go-franz SEEDS issue35 producer|consumer ...")
	}
	switch args[0] {
	case "producer":
		if len(args) != 6 {
			return fmt.Errorf("usage: go-franz SEEDS issue35 producer NAME CLIENT_ID TOPIC RATE SECONDS")
		}
		rate, err := strconv.ParseFloat(args[4], 64)
		if err != nil {
			return err
		}
		secs, err := strconv.ParseFloat(args[5], 64)
		if err != nil {
			return err
		}
		return i35Producer(strings.Split(seeds, ","), &i35{name: args[1], clientID: args[2]}, args[3], rate, secs)
	case "consumer":
		if len(args) != 7 {
			return fmt.Errorf("usage: go-franz SEEDS issue35 consumer NAME CLIENT_ID GROUP TOPIC PROTOCOL SECONDS")
		}
		secs, err := strconv.ParseFloat(args[6], 64)
		if err != nil {
			return err
		}
		return i35Consumer(strings.Split(seeds, ","), &i35{name: args[1], clientID: args[2]}, args[3], args[4], args[5], secs)
	}
	return fmt.Errorf("unknown issue35 role %q", args[0])
}

func i35Started(l *i35, role string, conf map[string]any) {
	l.emit("started", "role", role, "software", "franz-go", "version", "1.22.3", "config", conf)
}

func i35Producer(seeds []string, l *i35, topic string, rate, secs float64) error {
	i35Started(l, "producer", map[string]any{"acks": "all", "idempotent": true, "linger_ms": 5, "topic": topic})
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(seeds...),
		kgo.ClientID(l.clientID),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerLinger(5*time.Millisecond),
		kgo.RecordRetries(100),
	)
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx := context.Background()
	end := time.Now().Add(time.Duration(secs * float64(time.Second)))
	gap := time.Duration(float64(time.Second) / rate)
	next := time.Now()
	i := 0
	for ; time.Now().Before(end); i++ {
		n, key, sent := i, fmt.Sprintf("k-%d", i%24), time.Now().UnixNano()
		rec := &kgo.Record{Topic: topic, Key: []byte(key), Value: []byte(fmt.Sprintf("issue35 i=%d", i))}
		cl.Produce(ctx, rec, func(r *kgo.Record, err error) {
			if err != nil {
				l.emit("delivered", "topic", topic, "partition", r.Partition, "offset", nil, "i", n, "key", key,
					"sent_ns", sent, "error", err.Error())
				return
			}
			l.emit("delivered", "topic", r.Topic, "partition", r.Partition, "offset", r.Offset, "i", n, "key", key,
				"sent_ns", sent, "timestamp_ms", r.Timestamp.UnixMilli(), "error", nil)
		})
		next = next.Add(gap)
		time.Sleep(time.Until(next))
	}
	l.emit("flushing", "produced", i)
	fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err = cl.Flush(fctx)
	l.emit("closed", "produced", i, "error", errString(err))
	return nil
}

type i35Part struct {
	position, hw, lso int64
	seen              bool
}

func i35Consumer(seeds []string, l *i35, group, topic, protocol string, secs float64) error {
	i35Started(l, "consumer", map[string]any{"group": group, "topic": topic, "protocol": protocol,
		"auto_commit_interval_ms": 1000, "session_timeout_ms": 6000, "heartbeat_interval_ms": 1000,
		"balancer": "cooperative-sticky"})
	var mu sync.Mutex
	parts := map[int32]*i35Part{}
	opts := []kgo.Opt{
		kgo.SeedBrokers(seeds...),
		kgo.ClientID(l.clientID),
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.SessionTimeout(6 * time.Second),
		kgo.HeartbeatInterval(time.Second),
		kgo.AutoCommitInterval(time.Second),
		kgo.AutoCommitCallback(func(_ *kgo.Client, req *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
			var offs []map[string]any
			if req != nil {
				for _, t := range req.Topics {
					for _, p := range t.Partitions {
						offs = append(offs, map[string]any{"topic": t.Topic, "partition": p.Partition, "offset": p.Offset})
					}
				}
			}
			l.emit("committed", "group", group, "error", errString(err), "offsets", offs)
		}),
		kgo.OnPartitionsAssigned(func(_ context.Context, cl *kgo.Client, m map[string][]int32) {
			member, gen := cl.GroupMetadata()
			l.emit("assigned", "group", group, "protocol", protocol, "member_id", member, "generation", gen,
				"partitions", tpList(m))
		}),
		kgo.OnPartitionsRevoked(func(ctx context.Context, cl *kgo.Client, m map[string][]int32) {
			member, gen := cl.GroupMetadata()
			l.emit("revoked", "group", group, "protocol", protocol, "member_id", member, "generation", gen,
				"partitions", tpList(m))
			mu.Lock()
			for _, ps := range m {
				for _, p := range ps {
					delete(parts, p)
				}
			}
			mu.Unlock()
			// Commit what was consumed before giving the partitions away (kgo's documented pattern).
			if err := cl.CommitUncommittedOffsets(ctx); err != nil {
				l.emit("committed", "group", group, "error", err.Error(), "offsets", nil)
			}
		}),
		kgo.OnPartitionsLost(func(_ context.Context, cl *kgo.Client, m map[string][]int32) {
			member, gen := cl.GroupMetadata()
			l.emit("lost", "group", group, "protocol", protocol, "member_id", member, "generation", gen,
				"partitions", tpList(m))
		}),
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return err
	}
	l.emit("subscribed", "group", group, "protocol", protocol, "topics", []string{topic})
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(secs*float64(time.Second)))
	defer cancel()
	n := 0
	lastStats := time.Now()
	for ctx.Err() == nil {
		pctx, pcancel := context.WithTimeout(ctx, 200*time.Millisecond)
		fs := cl.PollFetches(pctx)
		pcancel()
		fs.EachError(func(t string, p int32, err error) {
			if err != context.DeadlineExceeded && err != context.Canceled {
				l.emit("error", "topic", t, "partition", p, "error", err.Error())
			}
		})
		fs.EachPartition(func(p kgo.FetchTopicPartition) {
			mu.Lock()
			st := parts[p.Partition]
			if st == nil {
				st = &i35Part{position: -1}
				parts[p.Partition] = st
			}
			st.hw, st.lso, st.seen = p.HighWatermark, p.LastStableOffset, true
			mu.Unlock()
			for _, r := range p.Records {
				var i any
				if v := string(r.Value); strings.HasPrefix(v, "issue35 i=") {
					if x, err := strconv.Atoi(v[10:]); err == nil {
						i = x
					}
				}
				l.emit("received", "topic", r.Topic, "partition", r.Partition, "offset", r.Offset, "key", string(r.Key),
					"timestamp_ms", r.Timestamp.UnixMilli(), "i", i)
				mu.Lock()
				st.position = r.Offset + 1
				mu.Unlock()
				n++
			}
		})
		if time.Since(lastStats) >= time.Second {
			lastStats = time.Now()
			member, gen := cl.GroupMetadata()
			var rows []map[string]any
			mu.Lock()
			keys := make([]int, 0, len(parts))
			for p := range parts {
				keys = append(keys, int(p))
			}
			sort.Ints(keys)
			for _, p := range keys {
				st := parts[int32(p)]
				row := map[string]any{"topic": topic, "partition": p, "position": nil, "hi_offset": st.hw,
					"ls_offset": st.lso, "lag": nil}
				if st.position >= 0 {
					row["position"] = st.position
					row["lag"] = st.hw - st.position
				}
				rows = append(rows, row)
			}
			mu.Unlock()
			l.emit("stats", "group", group, "member_id", member, "generation", gen, "partitions", rows)
		}
	}
	member, gen := cl.GroupMetadata()
	l.emit("closing", "group", group, "received", n, "member_id", member, "generation", gen)
	// Close commits the last offsets and leaves the group (LeaveGroup, or a heartbeat at epoch -1).
	cl.Close()
	l.emit("closed", "group", group)
	return nil
}
