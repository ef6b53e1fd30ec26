// franz-go client runs for kdissect's sample captures against Apache Kafka.
//
//	go run . BOOTSTRAP setup     # create the topics the other steps use (run before capturing)
//	go run . BOOTSTRAP admin     # kadm: metadata, create/alter/describe/delete topics, offsets, groups
//	go run . BOOTSTRAP produce   # zstd producer, then a classic consumer group
//	go run . BOOTSTRAP seed      # the produce step's producer alone (before capturing kip848)
//	go run . BOOTSTRAP kip848    # KIP-848 consumer group (ConsumerGroupHeartbeat), then describe it
//	go run . BOOTSTRAP share     # KIP-932 share group (ShareGroupHeartbeat, ShareFetch, ShareAcknowledge)
//	go run . BOOTSTRAP tls       # the TLS captures' workload (tls.go; security from KD_* variables)
//
// Everything goes to stdout: kgo's debug log, one WIRE line per Kafka frame written or read (see
// wirelog.go), and RESULT lines, one JSON object each, with what the client got back.
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
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	ordersTopic = "franz-orders" // 3 partitions, made by setup
	nRecords    = 12
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

// kgoLogger sends kgo's log lines through the same timestamped logger.
type kgoLogger struct{}

func (kgoLogger) Level() kgo.LogLevel { return kgo.LogLevelDebug }
func (kgoLogger) Log(level kgo.LogLevel, msg string, kv ...any) {
	var b strings.Builder
	fmt.Fprintf(&b, "KGO [%s] %s", level, msg)
	for i := 0; i+1 < len(kv); i += 2 {
		fmt.Fprintf(&b, "; %v: %v", kv[i], kv[i+1])
	}
	logger.Print(b.String())
}

func baseOpts(bootstrap, clientID string) []kgo.Opt {
	dialer := &net.Dialer{Timeout: 10 * time.Second}
	return []kgo.Opt{
		kgo.SeedBrokers(bootstrap),
		kgo.ClientID(clientID),
		kgo.WithLogger(kgoLogger{}),
		kgo.Dialer(func(ctx context.Context, network, host string) (net.Conn, error) {
			c, err := dialer.DialContext(ctx, network, host)
			if err != nil {
				return nil, err
			}
			return newWireConn(c, logger), nil
		}),
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func errCode(err error) int16 {
	if err == nil {
		return 0
	}
	if ke, ok := err.(*kerr.Error); ok {
		return ke.Code
	}
	return -1
}

func main() {
	if len(os.Args) >= 3 && os.Args[2] == "issue35" {
		// go-franz SEEDS issue35 ROLE ...: see issue35.go
		if err := issue35(os.Args[1], os.Args[3:]); err != nil {
			fmt.Fprintf(os.Stderr, "FAILED: %v\n", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) == 4 && os.Args[2] == "cluster" {
		// go-franz SEED[,SEED...] cluster SECONDS: see cluster.go
		if err := cluster(os.Args[1], os.Args[3:]); err != nil {
			logger.Printf("FAILED: %v", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: go-franz BOOTSTRAP setup|admin|produce|seed|kip848|share|tls|cluster SECONDS")
		os.Exit(2)
	}
	bootstrap, step := os.Args[1], os.Args[2]
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var err error
	switch step {
	case "setup":
		err = setup(ctx, bootstrap)
	case "admin":
		err = admin(ctx, bootstrap)
	case "produce":
		if err = produce(ctx, bootstrap); err == nil {
			err = consumeGroup(ctx, bootstrap, "franz-classic", false)
		}
	case "seed": // the produce step's records without its consumer (before the kip848 capture)
		err = produce(ctx, bootstrap)
	case "kip848":
		err = consumeGroup(ctx, bootstrap, "franz-848", true)
	case "share":
		err = share(ctx, bootstrap)
	case "tls": // see tls.go
		err = tlsRun(ctx, bootstrap)
	default:
		err = fmt.Errorf("unknown step %q", step)
	}
	if err != nil {
		logger.Printf("FAILED: %v", err)
		os.Exit(1)
	}
}

func setup(ctx context.Context, bootstrap string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.ClientID("franz-setup"))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	resps, err := adm.CreateTopics(ctx, 3, 1, nil, ordersTopic)
	if err != nil {
		return err
	}
	for _, r := range resps.Sorted() {
		if r.Err != nil && r.Err != kerr.TopicAlreadyExists {
			return r.Err
		}
	}
	// Records for the share group step to read, produced here so the share capture holds
	// only the share group's own traffic.
	pcl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.ClientID("franz-setup"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return err
	}
	defer pcl.Close()
	var rs []*kgo.Record
	for i := 0; i < 6; i++ {
		rs = append(rs, &kgo.Record{Topic: "franz-share-src", Partition: int32(i % 2),
			Key: []byte(fmt.Sprintf("job-%d", i)), Value: []byte(fmt.Sprintf("share job %d", i))})
	}
	if _, err := adm.CreateTopics(ctx, 2, 1, nil, "franz-share-src"); err != nil {
		return err
	}
	time.Sleep(time.Second)
	return pcl.ProduceSync(ctx, rs...).FirstErr()
}

func admin(ctx context.Context, bootstrap string) error {
	cl, err := kgo.NewClient(baseOpts(bootstrap, "franz-admin")...)
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)

	md, err := adm.BrokerMetadata(ctx)
	if err != nil {
		return err
	}
	var brokers []map[string]any
	for _, b := range md.Brokers {
		brokers = append(brokers, map[string]any{"node_id": b.NodeID, "host": b.Host, "port": b.Port})
	}
	result("broker_metadata", map[string]any{"cluster_id": md.Cluster, "controller": md.Controller, "brokers": brokers})

	retention := "3600000"
	created, err := adm.CreateTopics(ctx, 2, 1, map[string]*string{"retention.ms": &retention},
		"franz-admin-a", "franz-admin-b")
	if err != nil {
		return err
	}
	for _, r := range created.Sorted() {
		result("create_topic", map[string]any{"topic": r.Topic, "topic_id": uuidString(r.ID),
			"topic_id_base64": r.ID.String(), "partitions": r.NumPartitions, "replication_factor": r.ReplicationFactor,
			"error": errString(r.Err), "error_code": errCode(r.Err)})
	}
	// Creating one again fails with TOPIC_ALREADY_EXISTS (36).
	again, err := adm.CreateTopics(ctx, 2, 1, nil, "franz-admin-a")
	if err != nil {
		return err
	}
	for _, r := range again.Sorted() {
		result("create_topic_again", map[string]any{"topic": r.Topic, "error": errString(r.Err),
			"error_code": errCode(r.Err)})
	}

	grown, err := adm.UpdatePartitions(ctx, 4, "franz-admin-b")
	if err != nil {
		return err
	}
	for _, r := range grown.Sorted() {
		result("create_partitions", map[string]any{"topic": r.Topic, "total": 4, "error_code": errCode(r.Err)})
	}

	compact := "compact,delete"
	altered, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{
		{Op: kadm.SetConfig, Name: "cleanup.policy", Value: &compact},
		{Op: kadm.DeleteConfig, Name: "retention.ms"},
	}, "franz-admin-a")
	if err != nil {
		return err
	}
	for _, r := range altered {
		result("incremental_alter_configs", map[string]any{"resource": r.Name, "error_code": errCode(r.Err)})
	}

	rcs, err := adm.DescribeTopicConfigs(ctx, "franz-admin-a")
	if err != nil {
		return err
	}
	for _, rc := range rcs {
		vals := map[string]string{}
		for _, c := range rc.Configs {
			if c.Key == "cleanup.policy" || c.Key == "retention.ms" || c.Key == "segment.bytes" {
				vals[c.Key] = c.MaybeValue()
			}
		}
		result("describe_topic_configs", map[string]any{"resource": rc.Name, "configs_returned": len(rc.Configs),
			"some_values": vals, "error_code": errCode(rc.Err)})
	}

	bcs, err := adm.DescribeBrokerConfigs(ctx, 1)
	if err != nil {
		logger.Printf("describe broker configs: %v", err)
	} else {
		for _, rc := range bcs {
			result("describe_broker_configs", map[string]any{"resource": rc.Name, "configs_returned": len(rc.Configs),
				"error_code": errCode(rc.Err)})
		}
	}

	md, err = adm.Metadata(ctx, "franz-admin-a", "franz-admin-b", ordersTopic)
	if err != nil {
		return err
	}
	topics := map[string]int{}
	for name, t := range md.Topics {
		topics[name] = len(t.Partitions)
	}
	result("metadata", map[string]any{"cluster_id": md.Cluster, "topics": topics})

	ends, err := adm.ListEndOffsets(ctx, ordersTopic)
	if err != nil {
		return err
	}
	var offs []map[string]any
	ends.Each(func(o kadm.ListedOffset) {
		offs = append(offs, map[string]any{"topic": o.Topic, "partition": o.Partition, "offset": o.Offset,
			"leader_epoch": o.LeaderEpoch, "error_code": errCode(o.Err)})
	})
	sort.Slice(offs, func(i, j int) bool { return offs[i]["partition"].(int32) < offs[j]["partition"].(int32) })
	result("list_end_offsets", map[string]any{"offsets": offs})

	groups, err := adm.ListGroups(ctx)
	if err != nil {
		return err
	}
	result("list_groups", map[string]any{"groups": groups.Groups()})

	deleted, err := adm.DeleteTopics(ctx, "franz-admin-a", "franz-admin-b", "franz-no-such-topic")
	if err != nil {
		return err
	}
	for _, r := range deleted.Sorted() {
		result("delete_topic", map[string]any{"topic": r.Topic, "error": errString(r.Err), "error_code": errCode(r.Err)})
	}
	return nil
}

// records returns the records the produce step writes: keys, a null key, headers, and one
// 3000-byte value of random (incompressible, so it still spans several TCP segments after
// zstd) bytes.
func records() []*kgo.Record {
	rng := rand.New(rand.NewSource(44))
	var rs []*kgo.Record
	for i := 0; i < nRecords; i++ {
		r := &kgo.Record{Topic: ordersTopic, Partition: int32(i % 3)}
		if i%5 != 4 {
			r.Key = []byte(fmt.Sprintf("franz-key-%d", i%3))
		}
		if i%4 == 0 {
			r.Headers = []kgo.RecordHeader{{Key: "trace-id", Value: []byte(fmt.Sprintf("franz-%04d", i))}}
		}
		if i == 6 {
			r.Headers = append(r.Headers, kgo.RecordHeader{Key: "empty", Value: nil})
		}
		if i == 7 {
			big := make([]byte, 3000)
			rng.Read(big)
			r.Value = big
		} else {
			r.Value = []byte(fmt.Sprintf("franz order %d: %d units", i, 10*i+1))
		}
		rs = append(rs, r)
	}
	return rs
}

func produce(ctx context.Context, bootstrap string) error {
	opts := append(baseOpts(bootstrap, "franz-producer"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchCompression(kgo.ZstdCompression()),
		kgo.ProducerLinger(100*time.Millisecond),
	)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return err
	}
	defer cl.Close()
	results := cl.ProduceSync(ctx, records()...)
	for _, pr := range results {
		r := pr.Record
		result("produced", map[string]any{"topic": r.Topic, "partition": r.Partition, "offset": r.Offset,
			"key": keyString(r.Key), "value_len": len(r.Value), "headers": len(r.Headers),
			"producer_id": r.ProducerID, "producer_epoch": r.ProducerEpoch, "error": errString(pr.Err)})
	}
	return results.FirstErr()
}

// uuidString writes a topic id the way kdissect and most tools show a UUID (kadm's String is
// base64, as Kafka's own tools print it).
func uuidString(id kadm.TopicID) string {
	return fmt.Sprintf("%x-%x-%x-%x-%x", id[0:4], id[4:6], id[6:8], id[8:10], id[10:16])
}

func keyString(k []byte) any {
	if k == nil {
		return nil
	}
	return string(k)
}

func consumeGroup(ctx context.Context, bootstrap, group string, kip848 bool) error {
	id := "franz-consumer"
	if kip848 {
		id = "franz-consumer-848"
	}
	opts := append(baseOpts(bootstrap, id),
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(ordersTopic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.DisableAutoCommit(),
		kgo.FetchMaxWait(500*time.Millisecond),
		kgo.SessionTimeout(10*time.Second),
	)
	if kip848 {
		opts = append(opts, kgo.Balancers(kgo.RangeBalancer()), kgo.ServerSideBalancer())
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return err
	}
	got := 0
	deadline := time.Now().Add(45 * time.Second)
	for got < nRecords && time.Now().Before(deadline) {
		pctx, pcancel := context.WithTimeout(ctx, 5*time.Second)
		fetches := cl.PollFetches(pctx)
		pcancel()
		fetches.EachError(func(t string, p int32, err error) {
			if err != context.DeadlineExceeded {
				logger.Printf("fetch error %s/%d: %v", t, p, err)
			}
		})
		fetches.EachRecord(func(r *kgo.Record) {
			got++
			hs := map[string]any{} // a null header value stays null
			for _, h := range r.Headers {
				if h.Value == nil {
					hs[h.Key] = nil
				} else {
					hs[h.Key] = string(h.Value)
				}
			}
			result("consumed", map[string]any{"topic": r.Topic, "partition": r.Partition, "offset": r.Offset,
				"key": keyString(r.Key), "value_len": len(r.Value), "headers": hs,
				"leader_epoch": r.LeaderEpoch})
		})
	}
	result("consumed_total", map[string]any{"group": group, "records": got})
	if err := cl.CommitUncommittedOffsets(ctx); err != nil {
		logger.Printf("commit: %v", err)
	}
	var committed []map[string]any
	for t, ps := range cl.CommittedOffsets() {
		for p, o := range ps {
			committed = append(committed, map[string]any{"topic": t, "partition": p, "offset": o.Offset, "epoch": o.Epoch})
		}
	}
	sort.Slice(committed, func(i, j int) bool { return committed[i]["partition"].(int32) < committed[j]["partition"].(int32) })
	result("committed", map[string]any{"group": group, "offsets": committed})
	if kip848 {
		adm := kadm.NewClient(cl)
		described, err := adm.DescribeConsumerGroups(ctx, group)
		if err != nil {
			logger.Printf("describe consumer groups: %v", err)
		}
		for _, g := range described {
			var members []map[string]any
			for _, m := range g.Members {
				members = append(members, map[string]any{"member_id": m.MemberID, "client_id": m.ClientID,
					"member_epoch": m.MemberEpoch})
			}
			result("describe_consumer_group", map[string]any{"group": g.Group, "state": g.State,
				"epoch": g.Epoch, "assignor": g.AssignorName, "members": members, "error_code": errCode(g.Err)})
		}
	}
	cl.Close() // leaves the group
	return nil
}

func share(ctx context.Context, bootstrap string) error {
	const group, topic = "franz-share", "franz-share-src"
	opts := append(baseOpts(bootstrap, "franz-share"),
		kgo.ShareGroup(group),
		kgo.ConsumeTopics(topic),
		kgo.FetchMaxWait(500*time.Millisecond),
	)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return err
	}
	defer cl.Close()
	// A new share group starts at the latest offset unless the group config says otherwise:
	// IncrementalAlterConfigs on resource type GROUP (32).
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType = kmsg.ConfigResourceTypeGroupConfig
	res.ResourceName = group
	cfg := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	cfg.Name = "share.auto.offset.reset"
	earliest := "earliest"
	cfg.Value = &earliest
	res.Configs = append(res.Configs, cfg)
	req.Resources = append(req.Resources, res)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return err
	}
	for _, r := range resp.Resources {
		result("incremental_alter_configs", map[string]any{"resource_type": r.ResourceType,
			"resource": r.ResourceName, "error_code": r.ErrorCode})
	}
	got := 0
	deadline := time.Now().Add(40 * time.Second)
	for got < 6 && time.Now().Before(deadline) {
		pctx, pcancel := context.WithTimeout(ctx, 5*time.Second)
		fetches := cl.PollFetches(pctx)
		pcancel()
		fetches.EachError(func(t string, p int32, err error) {
			if err != context.DeadlineExceeded {
				logger.Printf("fetch error %s/%d: %v", t, p, err)
			}
		})
		fetches.EachRecord(func(r *kgo.Record) {
			got++
			status := kgo.AckAccept
			if string(r.Key) == "job-3" {
				status = kgo.AckReject // archived, never redelivered
			}
			r.Ack(status)
			result("share_consumed", map[string]any{"topic": r.Topic, "partition": r.Partition,
				"offset": r.Offset, "key": keyString(r.Key), "value": string(r.Value),
				"delivery_count": r.DeliveryCount(), "ack": status.String()})
		})
	}
	if err := cl.FlushAcks(ctx); err != nil {
		logger.Printf("flush acks: %v", err)
	}
	result("share_total", map[string]any{"group": group, "records": got})
	return nil
}
