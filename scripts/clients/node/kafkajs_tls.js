// kafkajs over TLS for kdissect's TLS captures (samples/tls-kafkajs-*.pcap), and the same
// workload in plaintext for their plaintext legs.
//
//   node kafkajs_tls.js BOOTSTRAP
//
// Environment:
//   KD_SECURITY   PLAINTEXT (default) or SSL
//   KD_TLS_MAX    TLSv1.2 or TLSv1.3 (default): tls.connect maxVersion
//   KD_CIPHERS    tls.connect ciphers (OpenSSL names; TLS 1.3 suites by their IANA names)
//   KD_CA         PEM file of the broker's certificates
//   KD_KEYLOG     NSS key log: every line of each TLS socket's 'keylog' event is appended
//
// The workload: a producer (acks -1, no compression) writing 12 messages to tls-orders, message
// i to partition i % 3 with timestamp 2026-01-01T00:00:00Z + i s, then message 12, 20000
// xorshift bytes with key "big", to partition 0; then a consumer in group tls-kjs-group reading
// the 13 messages, committing the next offsets once and disconnecting. kafkajs's DEBUG log and RESULT lines go
// to stdout. TLS connections ask for SNI "localhost".
'use strict'
const fs = require('fs')
const net = require('net')
const tls = require('tls')
const { Kafka, logLevel } = require('kafkajs')

const TOPIC = 'tls-orders'
const T0 = 1767225600000

function result (kind, fields) {
  const sorted = {}
  for (const k of Object.keys({ ...fields, result: kind }).sort()) {
    sorted[k] = k === 'result' ? kind : fields[k]
  }
  process.stdout.write('RESULT ' + JSON.stringify(sorted) + '\n')
}

const logCreator = () => ({ namespace, level, log }) => {
  const { message, timestamp, logger, ...extra } = log
  const name = { [logLevel.ERROR]: 'ERROR', [logLevel.WARN]: 'WARN', [logLevel.INFO]: 'INFO', [logLevel.DEBUG]: 'DEBUG' }[level]
  process.stdout.write(`${timestamp} ${name} [${namespace}] ${message} ${JSON.stringify(extra)}\n`)
}

// kafkajs's own socket factory, plus the key log and a line per handshake.
function socketFactory ({ host, port, ssl, onConnect }) {
  if (!ssl) return net.connect({ host, port }, onConnect)
  const socket = tls.connect(Object.assign({ host, port }, ssl), () => {
    process.stdout.write(`${new Date().toISOString()} TLS ${socket.localPort} -> ${port} ${socket.getProtocol()} ` +
      `${socket.getCipher().standardName} resumed=${socket.isSessionReused()}\n`)
    onConnect()
  })
  if (process.env.KD_KEYLOG) {
    socket.on('keylog', line => fs.appendFileSync(process.env.KD_KEYLOG, line))
  }
  socket.setKeepAlive(true, 60000)
  return socket
}

function sslOptions () {
  if (process.env.KD_SECURITY !== 'SSL') return undefined
  const o = { ca: fs.readFileSync(process.env.KD_CA), servername: 'localhost',
              maxVersion: process.env.KD_TLS_MAX || 'TLSv1.3' }
  if (process.env.KD_CIPHERS) o.ciphers = process.env.KD_CIPHERS
  return o
}

function bigValue () {
  const b = Buffer.alloc(20000)
  let x = 20
  for (let i = 0; i < b.length; i++) {
    x ^= x << 13; x ^= x >>> 17; x ^= x << 5
    b[i] = x & 0xff
  }
  return b
}

async function main () {
  const bootstrap = process.argv[2]
  result('security', { node: process.version, openssl: process.versions.openssl,
                       security: process.env.KD_SECURITY || 'PLAINTEXT', tls_max: process.env.KD_TLS_MAX || null,
                       ciphers: process.env.KD_CIPHERS || null })
  const kafka = new Kafka({ clientId: 'kafkajs-tls', brokers: [bootstrap], ssl: sslOptions(), socketFactory,
                            logLevel: logLevel.DEBUG, logCreator, retry: { retries: 3 } })
  const producer = kafka.producer({ allowAutoTopicCreation: false })
  await producer.connect()
  const messages = []
  for (let i = 0; i < 12; i++) {
    messages.push({ partition: i % 3, key: i % 5 === 4 ? null : `kjs-key-${i % 3}`,
                    value: `kafkajs tls order ${i}: ${10 * i + 1} units`, timestamp: String(T0 + 1000 * i),
                    headers: i % 4 === 0 ? { 'trace-id': `kjs-${String(i).padStart(4, '0')}` } : undefined })
  }
  messages.push({ partition: 0, key: 'big', value: bigValue(), timestamp: String(T0 + 12000) })
  const sent = await producer.send({ topic: TOPIC, acks: -1, messages })
  result('produced', { responses: sent })
  await producer.disconnect()

  const consumer = kafka.consumer({ groupId: 'tls-kjs-group', maxWaitTimeInMs: 500 })
  await consumer.connect()
  await consumer.subscribe({ topic: TOPIC, fromBeginning: true })
  let got = 0
  const next = {}
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('timed out')), 45000)
    consumer.run({
      autoCommit: false,
      eachMessage: async ({ partition, message }) => {
        got++
        next[partition] = Math.max(next[partition] || 0, Number(message.offset) + 1)
        result('consumed', { partition, offset: message.offset, key: message.key && message.key.toString(),
                             value_len: message.value.length, timestamp: message.timestamp })
        if (got === 13) { clearTimeout(timer); resolve() }
      }
    }).catch(reject)
  })
  const offsets = []
  for (const p of Object.keys(next)) offsets.push({ topic: TOPIC, partition: Number(p), offset: String(next[p]) })
  await consumer.commitOffsets(offsets)
  result('consumed_total', { group: 'tls-kjs-group', records: got, committed: offsets })
  await consumer.disconnect()
}

main().catch(e => { process.stdout.write(`FAILED ${e.stack}\n`); process.exit(1) })
