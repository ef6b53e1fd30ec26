package main

// The franz-go side of the cluster captures (samples/cluster-*.pcap): for SECONDS, a producer
// (acks=all, idempotent, one record a second to cluster-orders, zstd) and a classic group
// consumer of the same topic that commits every 2 s, both through seed brokers of a
// three-broker cluster. Every produced and committed offset is a RESULT line.

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

const clusterTopic = "cluster-orders"

func cluster(bootstrap string, args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: go-franz BOOTSTRAP cluster SECONDS")
	}
	secs, err := strconv.ParseFloat(args[0], 64)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(secs*float64(time.Second)))
	defer cancel()
	seeds := strings.Split(bootstrap, ",")
	done := make(chan error, 1)
	go func() { done <- clusterConsumer(ctx, seeds) }()
	perr := clusterProducer(ctx, seeds)
	cerr := <-done
	if perr != nil {
		return perr
	}
	return cerr
}

func clusterProducer(ctx context.Context, seeds []string) error {
	opts := append(baseOpts(seeds[0], "franz-cluster-producer"),
		kgo.SeedBrokers(seeds...),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerBatchCompression(kgo.ZstdCompression()),
		kgo.ProducerLinger(10*time.Millisecond),
		kgo.RecordRetries(100),
		kgo.MetadataMaxAge(5*time.Second),
	)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return err
	}
	defer cl.Close()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			fctx, fcancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer fcancel()
			return cl.Flush(fctx)
		case <-tick.C:
		}
		r := &kgo.Record{Topic: clusterTopic, Key: []byte(fmt.Sprintf("franz-%d", i%5)),
			Value: []byte(fmt.Sprintf("franz order %d", i))}
		n := i
		cl.Produce(context.Background(), r, func(r *kgo.Record, err error) {
			result("produced", map[string]any{"i": n, "topic": r.Topic, "partition": r.Partition,
				"offset": r.Offset, "key": keyString(r.Key), "producer_id": r.ProducerID,
				"producer_epoch": r.ProducerEpoch, "error": errString(err)})
		})
	}
}

func clusterConsumer(ctx context.Context, seeds []string) error {
	opts := append(baseOpts(seeds[0], "franz-cluster-consumer"),
		kgo.SeedBrokers(seeds...),
		kgo.ConsumerGroup("franz-cluster"),
		kgo.ConsumeTopics(clusterTopic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.DisableAutoCommit(),
		kgo.FetchMaxWait(500*time.Millisecond),
		kgo.SessionTimeout(10*time.Second),
		kgo.MetadataMaxAge(5*time.Second),
	)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return err
	}
	defer cl.Close()
	last := time.Now()
	got := 0
	for ctx.Err() == nil {
		pctx, pcancel := context.WithTimeout(ctx, time.Second)
		fetches := cl.PollFetches(pctx)
		pcancel()
		fetches.EachRecord(func(r *kgo.Record) {
			got++
			result("consumed", map[string]any{"partition": r.Partition, "offset": r.Offset,
				"key": keyString(r.Key), "leader_epoch": r.LeaderEpoch})
		})
		if time.Since(last) >= 2*time.Second {
			clusterCommit(cl)
			last = time.Now()
		}
	}
	clusterCommit(cl)
	result("consumed_total", map[string]any{"group": "franz-cluster", "records": got})
	return nil
}

func clusterCommit(cl *kgo.Client) {
	cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	offs := cl.UncommittedOffsets()
	if len(offs) == 0 {
		return
	}
	var list []map[string]any
	for t, ps := range offs {
		for p, o := range ps {
			list = append(list, map[string]any{"topic": t, "partition": p, "offset": o.Offset, "epoch": o.Epoch})
		}
	}
	err := cl.CommitUncommittedOffsets(cctx)
	result("commit", map[string]any{"group": "franz-cluster", "offsets": list, "error": errString(err)})
}
