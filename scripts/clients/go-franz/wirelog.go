package main

// A net.Conn wrapper that logs the Kafka frames a client writes and reads: for each request
// its API key, version, correlation id and size, for each response its correlation id and
// size, with the connection's local port so that lines can be matched to TCP streams in a
// capture. It only looks at the headers; the library does all the encoding.

import (
	"encoding/binary"
	"fmt"
	"log"
	"net"
	"sync"
)

type wireConn struct {
	net.Conn
	logger *log.Logger
	mu     sync.Mutex
	out    []byte
	in     []byte
	keys   map[int32][2]int16 // correlation id -> api key, version
}

func newWireConn(c net.Conn, logger *log.Logger) net.Conn {
	w := &wireConn{Conn: c, logger: logger, keys: map[int32][2]int16{}}
	logger.Printf("WIRE connect %s -> %s", c.LocalAddr(), c.RemoteAddr())
	return w
}

func (w *wireConn) port() string {
	if a, ok := w.Conn.LocalAddr().(*net.TCPAddr); ok {
		return fmt.Sprint(a.Port)
	}
	return w.Conn.LocalAddr().String()
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
		frame := w.out[4 : 4+size]
		if size >= 8 {
			key := int16(binary.BigEndian.Uint16(frame))
			ver := int16(binary.BigEndian.Uint16(frame[2:]))
			corr := int32(binary.BigEndian.Uint32(frame[4:]))
			client := ""
			if size >= 10 {
				l := int(int16(binary.BigEndian.Uint16(frame[8:])))
				if l > 0 && 10+l <= size {
					client = string(frame[10 : 10+l])
				}
			}
			w.keys[corr] = [2]int16{key, ver}
			w.logger.Printf("WIRE port=%s > request api_key=%d (%s) v%d corr=%d client_id=%q bytes=%d",
				w.port(), key, apiName(key), ver, corr, client, 4+size)
		} else {
			w.logger.Printf("WIRE port=%s > frame of %d bytes (SASL token?)", w.port(), 4+size)
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
			if ok {
				delete(w.keys, corr)
				w.logger.Printf("WIRE port=%s < response api_key=%d (%s) v%d corr=%d bytes=%d",
					w.port(), kv[0], apiName(kv[0]), kv[1], corr, 4+size)
			} else {
				w.logger.Printf("WIRE port=%s < response corr=%d bytes=%d (no matching request)",
					w.port(), corr, 4+size)
			}
		}
		w.in = w.in[4+size:]
	}
	return n, err
}

func (w *wireConn) Close() error {
	w.logger.Printf("WIRE port=%s close", w.port())
	return w.Conn.Close()
}

var apiNames = map[int16]string{
	0: "Produce", 1: "Fetch", 2: "ListOffsets", 3: "Metadata", 8: "OffsetCommit", 9: "OffsetFetch",
	10: "FindCoordinator", 11: "JoinGroup", 12: "Heartbeat", 13: "LeaveGroup", 14: "SyncGroup",
	15: "DescribeGroups", 16: "ListGroups", 17: "SaslHandshake", 18: "ApiVersions", 19: "CreateTopics",
	20: "DeleteTopics", 21: "DeleteRecords", 22: "InitProducerId", 23: "OffsetForLeaderEpoch",
	24: "AddPartitionsToTxn", 25: "AddOffsetsToTxn", 26: "EndTxn", 28: "TxnOffsetCommit",
	29: "DescribeAcls", 30: "CreateAcls", 31: "DeleteAcls", 32: "DescribeConfigs", 33: "AlterConfigs",
	35: "DescribeLogDirs", 36: "SaslAuthenticate", 37: "CreatePartitions", 42: "DeleteGroups",
	43: "ElectLeaders", 44: "IncrementalAlterConfigs", 47: "OffsetDelete", 48: "DescribeClientQuotas",
	50: "DescribeUserScramCredentials", 55: "DescribeQuorum", 60: "DescribeCluster",
	61: "DescribeProducers", 65: "DescribeTransactions", 66: "ListTransactions",
	68: "ConsumerGroupHeartbeat", 69: "ConsumerGroupDescribe", 71: "GetTelemetrySubscriptions",
	72: "PushTelemetry", 74: "ListConfigResources", 75: "DescribeTopicPartitions",
	76: "ShareGroupHeartbeat", 77: "ShareGroupDescribe", 78: "ShareFetch", 79: "ShareAcknowledge",
	90: "DescribeShareGroupOffsets", 91: "AlterShareGroupOffsets", 92: "DeleteShareGroupOffsets",
}

func apiName(k int16) string {
	if n, ok := apiNames[k]; ok {
		return n
	}
	return "?"
}
