package main

// The TLS captures (samples/tls-franz-*.pcap) and their plaintext legs:
//
//	go-franz BOOTSTRAP tls
//
// Environment:
//
//	KD_SECURITY     PLAINTEXT (default) or SSL
//	KD_TLS_MAX      1.2 or 1.3 (default): the highest version offered
//	KD_TLS_SUITES   TLS 1.2 suites offered, Go names, comma-separated (crypto/tls cannot narrow
//	                TLS 1.3 suites: the server's order picks those)
//	KD_CA           PEM file of the broker's certificates
//	KD_KEYLOG       NSS key log written through tls.Config.KeyLogWriter
//
// The workload: a producer (acks=all, idempotent, no compression, manual partitioner) writing
// 12 records to tls-orders, record i to partition i % 3 with timestamp 2026-01-01T00:00:00Z +
// i s, then record 12: 20000 random bytes (math/rand seed 20) with key "big" to partition 0;
// then a classic-group consumer (group tls-franz-group) reading the 13 records, committing and
// leaving. Connections ask for SNI "localhost" and share one session cache, so later
// connections to the broker resume an earlier session.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"math/rand"
	"net"
	"os"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

const tlsTopic = "tls-orders"

var tlsT0 = time.UnixMilli(1767225600000)

func tlsConfig() (*tls.Config, error) {
	pem, err := os.ReadFile(os.Getenv("KD_CA"))
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("no certificate in %s", os.Getenv("KD_CA"))
	}
	cfg := &tls.Config{
		RootCAs:            pool,
		ServerName:         "localhost",
		MinVersion:         tls.VersionTLS12,
		MaxVersion:         tls.VersionTLS13,
		ClientSessionCache: tls.NewLRUClientSessionCache(16),
	}
	if os.Getenv("KD_TLS_MAX") == "1.2" {
		cfg.MaxVersion = tls.VersionTLS12
	}
	if s := os.Getenv("KD_TLS_SUITES"); s != "" {
		byName := map[string]uint16{}
		for _, c := range tls.CipherSuites() {
			byName[c.Name] = c.ID
		}
		for _, n := range strings.Split(s, ",") {
			id, ok := byName[n]
			if !ok {
				return nil, fmt.Errorf("unknown suite %s", n)
			}
			cfg.CipherSuites = append(cfg.CipherSuites, id)
		}
	}
	if path := os.Getenv("KD_KEYLOG"); path != "" {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, err
		}
		cfg.KeyLogWriter = f
	}
	return cfg, nil
}

// tlsOpts: baseOpts whose dialer adds TLS under the wire log (kgo's Dialer and DialTLSConfig
// cannot be set together), so the WIRE lines still show the plaintext frames.
func tlsOpts(bootstrap, clientID string, cfg *tls.Config) []kgo.Opt {
	opts := baseOpts(bootstrap, clientID)
	if cfg == nil {
		return opts
	}
	dialer := &net.Dialer{Timeout: 10 * time.Second}
	return append(opts, kgo.Dialer(func(ctx context.Context, network, host string) (net.Conn, error) {
		c, err := dialer.DialContext(ctx, network, host)
		if err != nil {
			return nil, err
		}
		tc := tls.Client(c, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			c.Close()
			return nil, err
		}
		st := tc.ConnectionState()
		logger.Printf("TLS %s -> %s version=%s suite=%s resumed=%v", c.LocalAddr(), c.RemoteAddr(),
			tls.VersionName(st.Version), tls.CipherSuiteName(st.CipherSuite), st.DidResume)
		return newWireConn(tc, logger), nil
	}))
}

func tlsRecords() []*kgo.Record {
	var rs []*kgo.Record
	for i := 0; i < 12; i++ {
		r := &kgo.Record{Topic: tlsTopic, Partition: int32(i % 3), Timestamp: tlsT0.Add(time.Duration(i) * time.Second)}
		if i%5 != 4 {
			r.Key = []byte(fmt.Sprintf("franz-key-%d", i%3))
		}
		if i%4 == 0 {
			r.Headers = []kgo.RecordHeader{{Key: "trace-id", Value: []byte(fmt.Sprintf("franz-%04d", i))}}
		}
		r.Value = []byte(fmt.Sprintf("franz tls order %d: %d units", i, 10*i+1))
		rs = append(rs, r)
	}
	big := make([]byte, 20000)
	rand.New(rand.NewSource(20)).Read(big)
	rs = append(rs, &kgo.Record{Topic: tlsTopic, Partition: 0, Key: []byte("big"), Value: big,
		Timestamp: tlsT0.Add(12 * time.Second)})
	return rs
}

func tlsRun(ctx context.Context, bootstrap string) error {
	var cfg *tls.Config
	if os.Getenv("KD_SECURITY") == "SSL" {
		var err error
		if cfg, err = tlsConfig(); err != nil {
			return err
		}
	}
	result("security", map[string]any{"security": os.Getenv("KD_SECURITY"), "tls_max": os.Getenv("KD_TLS_MAX"),
		"suites": os.Getenv("KD_TLS_SUITES"), "bootstrap": bootstrap})
	pcl, err := kgo.NewClient(append(tlsOpts(bootstrap, "franz-tls-producer", cfg),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.ProducerLinger(50*time.Millisecond))...)
	if err != nil {
		return err
	}
	results := pcl.ProduceSync(ctx, tlsRecords()...)
	pcl.Close()
	for _, pr := range results {
		r := pr.Record
		result("produced", map[string]any{"topic": r.Topic, "partition": r.Partition, "offset": r.Offset,
			"key": keyString(r.Key), "value_len": len(r.Value), "error": errString(pr.Err)})
	}
	if err := results.FirstErr(); err != nil {
		return err
	}
	ccl, err := kgo.NewClient(append(tlsOpts(bootstrap, "franz-tls-consumer", cfg),
		kgo.ConsumerGroup("tls-franz-group"),
		kgo.ConsumeTopics(tlsTopic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.DisableAutoCommit(),
		kgo.FetchMaxWait(500*time.Millisecond))...)
	if err != nil {
		return err
	}
	got := 0
	deadline := time.Now().Add(45 * time.Second)
	for got < 13 && time.Now().Before(deadline) {
		pctx, pcancel := context.WithTimeout(ctx, 5*time.Second)
		fetches := ccl.PollFetches(pctx)
		pcancel()
		fetches.EachRecord(func(r *kgo.Record) {
			got++
			result("consumed", map[string]any{"topic": r.Topic, "partition": r.Partition, "offset": r.Offset,
				"key": keyString(r.Key), "value_len": len(r.Value), "timestamp": r.Timestamp.UnixMilli()})
		})
	}
	if err := ccl.CommitUncommittedOffsets(ctx); err != nil {
		logger.Printf("commit: %v", err)
	}
	result("consumed_total", map[string]any{"group": "tls-franz-group", "records": got})
	ccl.Close()
	return nil
}
