// IBM/sarama client run for kdissect's sample captures against Apache Kafka.
//
//	go run . BOOTSTRAP setup   # create topic sarama-events (2 partitions), before capturing
//	go run . BOOTSTRAP run     # snappy SyncProducer, then a consumer group that commits
//
// Everything goes to stdout: sarama.Logger and sarama.DebugLogger lines, one WIRE line per
// Kafka frame written or read (see wirelog.go; sarama does not log its requests itself), and
// RESULT lines, one JSON object each, with what the client got back.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"math/rand"
	"net"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/IBM/sarama"
)

const (
	topic    = "sarama-events"
	group    = "sarama-group"
	nRecords = 8
)

var (
	outMu  sync.Mutex
	logger = log.New(lockedStdout{}, "", log.Ltime|log.Lmicroseconds)
)

type lockedStdout struct{}

func (lockedStdout) Write(p []byte) (int, error) {
	outMu.Lock()
	defer outMu.Unlock()
	return os.Stdout.Write(p)
}

func result(kind string, fields map[string]any) {
	fields["result"] = kind
	b, err := json.Marshal(fields)
	if err != nil {
		panic(err)
	}
	lockedStdout{}.Write([]byte("RESULT " + string(b) + "\n"))
}

// wireDialer hands sarama connections wrapped in the frame logger.
type wireDialer struct{ d net.Dialer }

func (w *wireDialer) Dial(network, addr string) (net.Conn, error) {
	c, err := w.d.Dial(network, addr)
	if err != nil {
		return nil, err
	}
	return newWireConn(c, logger), nil
}

func config(clientID string) *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.ClientID = clientID
	cfg.Version = sarama.MaxVersion
	cfg.Net.Proxy.Enable = true // the only hook sarama has for a custom dialer
	cfg.Net.Proxy.Dialer = &wireDialer{d: net.Dialer{Timeout: 10 * time.Second}}
	return cfg
}

func keyString(k []byte) any {
	if k == nil {
		return nil
	}
	return string(k)
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: go-sarama BOOTSTRAP setup|run")
		os.Exit(2)
	}
	sarama.Logger = log.New(lockedStdout{}, "SARAMA ", log.Ltime|log.Lmicroseconds)
	sarama.DebugLogger = log.New(lockedStdout{}, "SARAMA DEBUG ", log.Ltime|log.Lmicroseconds)
	bootstrap, step := os.Args[1], os.Args[2]
	var err error
	switch step {
	case "setup":
		err = setup(bootstrap)
	case "run":
		if err = produce(bootstrap); err == nil {
			err = consume(bootstrap)
		}
	default:
		err = fmt.Errorf("unknown step %q", step)
	}
	if err != nil {
		logger.Printf("FAILED: %v", err)
		os.Exit(1)
	}
}

func setup(bootstrap string) error {
	cfg := sarama.NewConfig()
	cfg.ClientID = "sarama-setup"
	cfg.Version = sarama.MaxVersion
	adm, err := sarama.NewClusterAdmin([]string{bootstrap}, cfg)
	if err != nil {
		return err
	}
	defer adm.Close()
	err = adm.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: 2, ReplicationFactor: 1}, false)
	if err != nil {
		if te, ok := err.(*sarama.TopicError); ok && te.Err == sarama.ErrTopicAlreadyExists {
			return nil
		}
	}
	return err
}

func produce(bootstrap string) error {
	cfg := config("sarama-producer")
	cfg.Producer.Return.Successes = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Compression = sarama.CompressionSnappy
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Producer.Flush.Frequency = 100 * time.Millisecond
	p, err := sarama.NewSyncProducer([]string{bootstrap}, cfg)
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewSource(44))
	var msgs []*sarama.ProducerMessage
	for i := 0; i < nRecords; i++ {
		m := &sarama.ProducerMessage{Topic: topic, Partition: int32(i % 2)}
		if i != 3 {
			m.Key = sarama.StringEncoder(fmt.Sprintf("sarama-key-%d", i%2))
		}
		if i%3 == 0 {
			m.Headers = []sarama.RecordHeader{{Key: []byte("origin"), Value: []byte("sarama")}}
		}
		if i == 5 {
			big := make([]byte, 2500)
			rng.Read(big)
			m.Value = sarama.ByteEncoder(big)
		} else {
			m.Value = sarama.StringEncoder(fmt.Sprintf("sarama event %d", i))
		}
		msgs = append(msgs, m)
	}
	err = p.SendMessages(msgs)
	for _, m := range msgs {
		var key any
		if m.Key != nil {
			b, _ := m.Key.Encode()
			key = string(b)
		}
		result("produced", map[string]any{"topic": m.Topic, "partition": m.Partition, "offset": m.Offset,
			"key": key, "value_len": m.Value.Length(), "headers": len(m.Headers)})
	}
	if cerr := p.Close(); err == nil {
		err = cerr
	}
	return err
}

type handler struct {
	mu     sync.Mutex
	got    int
	cancel context.CancelFunc
}

func (h *handler) Setup(s sarama.ConsumerGroupSession) error {
	result("assigned", map[string]any{"member_id": s.MemberID(), "generation": s.GenerationID(),
		"claims": s.Claims()})
	return nil
}

func (h *handler) Cleanup(s sarama.ConsumerGroupSession) error {
	s.Commit() // synchronous OffsetCommit of the marked offsets
	return nil
}

func (h *handler) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	for m := range c.Messages() {
		hs := map[string]string{}
		for _, rh := range m.Headers {
			hs[string(rh.Key)] = string(rh.Value)
		}
		result("consumed", map[string]any{"topic": m.Topic, "partition": m.Partition, "offset": m.Offset,
			"key": keyString(m.Key), "value_len": len(m.Value), "headers": hs})
		s.MarkMessage(m, "")
		h.mu.Lock()
		h.got++
		if h.got == nRecords {
			h.cancel()
		}
		h.mu.Unlock()
	}
	return nil
}

func consume(bootstrap string) error {
	cfg := config("sarama-consumer")
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.Offsets.AutoCommit.Enable = false
	cfg.Consumer.Group.Session.Timeout = 10 * time.Second
	cfg.Consumer.Group.Heartbeat.Interval = time.Second
	cfg.Consumer.MaxWaitTime = 500 * time.Millisecond
	client, err := sarama.NewClient([]string{bootstrap}, cfg)
	if err != nil {
		return err
	}
	defer client.Close()
	cg, err := sarama.NewConsumerGroupFromClient(group, client)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	h := &handler{cancel: cancel}
	go func() {
		for err := range cg.Errors() {
			logger.Printf("group error: %v", err)
		}
	}()
	for ctx.Err() == nil {
		if err := cg.Consume(ctx, []string{topic}, h); err != nil {
			logger.Printf("consume: %v", err)
			break
		}
	}
	result("consumed_total", map[string]any{"group": group, "records": h.got})
	if err := cg.Close(); err != nil { // LeaveGroup
		logger.Printf("close: %v", err)
	}
	// What the group committed, read back with OffsetFetch through a separate admin client.
	adm, err := sarama.NewClusterAdminFromClient(client)
	if err != nil {
		return err
	}
	resp, err := adm.ListConsumerGroupOffsets(group, map[string][]int32{topic: {0, 1}})
	if err != nil {
		return err
	}
	var committed []map[string]any
	for t, ps := range resp.Blocks {
		for p, b := range ps {
			committed = append(committed, map[string]any{"topic": t, "partition": p, "offset": b.Offset,
				"error_code": int16(b.Err)})
		}
	}
	sort.Slice(committed, func(i, j int) bool { return committed[i]["partition"].(int32) < committed[j]["partition"].(int32) })
	result("committed", map[string]any{"group": group, "offsets": committed})
	return nil
}
