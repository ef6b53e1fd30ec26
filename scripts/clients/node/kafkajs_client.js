// kafkajs client runs for kdissect's sample captures against Apache Kafka.
//
//   node kafkajs_client.js BOOTSTRAP setup   create topic kjs-orders (2 partitions), before capturing
//   node kafkajs_client.js BOOTSTRAP admin   admin: topics, metadata, cluster, configs, partitions,
//                                            offsets, groups
//   node kafkajs_client.js BOOTSTRAP group   gzip producer, then a consumer group that commits
//
// kafkajs's DEBUG log (one line per request and response with its correlation id and size) and
// RESULT lines, one JSON object each, for what the client got back, all to stdout.
'use strict'
const { Kafka, logLevel, CompressionTypes, ConfigResourceTypes } = require('kafkajs')

const TOPIC = 'kjs-orders'
const N_RECORDS = 8

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

function client (bootstrap, clientId) {
  return new Kafka({ clientId, brokers: [bootstrap], logLevel: logLevel.DEBUG, logCreator,
                     retry: { retries: 2 } })
}

// A deterministic 2800-byte value that does not compress (xorshift bytes).
function bigValue () {
  const b = Buffer.alloc(2800)
  let x = 44
  for (let i = 0; i < b.length; i++) {
    x ^= x << 13; x ^= x >>> 17; x ^= x << 5
    b[i] = x & 0xff
  }
  return b
}

async function setup (bootstrap) {
  const admin = client(bootstrap, 'kafkajs-setup').admin()
  await admin.connect()
  await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 2, replicationFactor: 1 }] })
  await admin.disconnect()
}

async function adminStep (bootstrap) {
  const admin = client(bootstrap, 'kafkajs-admin').admin()
  await admin.connect()
  const created = await admin.createTopics({
    waitForLeaders: true,
    topics: [{ topic: 'kjs-admin-a', numPartitions: 2, replicationFactor: 1,
               configEntries: [{ name: 'retention.ms', value: '5400000' }] },
             { topic: 'kjs-admin-b', numPartitions: 1, replicationFactor: 1 }]
  })
  result('create_topics', { created })
  try {
    await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 2 }], validateOnly: false })
    result('create_topic_again', { topic: TOPIC, created: false })
  } catch (e) { result('create_topic_again', { topic: TOPIC, error: e.type || e.message }) }
  const cluster = await admin.describeCluster()
  result('describe_cluster', { cluster_id: cluster.clusterId, controller: cluster.controller,
                               brokers: cluster.brokers })
  const md = await admin.fetchTopicMetadata({ topics: ['kjs-admin-a', TOPIC] })
  result('fetch_topic_metadata', { topics: md.topics.map(t => [t.name, t.partitions.length]) })
  await admin.createPartitions({ topicPartitions: [{ topic: 'kjs-admin-b', count: 3 }] })
  result('create_partitions', { topic: 'kjs-admin-b', total: 3 })
  await admin.alterConfigs({ validateOnly: false, resources: [{ type: ConfigResourceTypes.TOPIC,
    name: 'kjs-admin-a', configEntries: [{ name: 'cleanup.policy', value: 'compact' }] }] })
  result('alter_configs', { resource: 'kjs-admin-a' })
  const configs = await admin.describeConfigs({ includeSynonyms: false, resources: [
    { type: ConfigResourceTypes.TOPIC, name: 'kjs-admin-a', configNames: ['cleanup.policy', 'retention.ms'] },
    { type: ConfigResourceTypes.BROKER, name: '1', configNames: ['num.io.threads'] }] })
  result('describe_configs', { resources: configs.resources.map(r => ({ name: r.resourceName,
    error_code: r.errorCode, values: Object.fromEntries(r.configEntries.map(c => [c.configName, c.configValue])) })) })
  const offsets = await admin.fetchTopicOffsets(TOPIC)
  result('fetch_topic_offsets', { topic: TOPIC, offsets })
  const groups = await admin.listGroups()
  result('list_groups', { groups: groups.groups.map(g => g.groupId).sort() })
  await admin.deleteTopics({ topics: ['kjs-admin-a', 'kjs-admin-b'] })
  result('delete_topics', { topics: ['kjs-admin-a', 'kjs-admin-b'] })
  await admin.disconnect()
}

async function groupStep (bootstrap) {
  const kafka = client(bootstrap, 'kafkajs-client')
  const producer = kafka.producer({ allowAutoTopicCreation: false })
  await producer.connect()
  const messages = []
  for (let i = 0; i < N_RECORDS; i++) {
    const m = { partition: i % 2, value: i === 3 ? bigValue() : `kafkajs order ${i}: ${7 * i + 3} items` }
    if (i !== 6) m.key = `kjs-key-${i % 2}`
    if (i % 3 === 0) m.headers = { 'trace-id': `kjs-${String(i).padStart(4, '0')}`, lang: 'js' }
    messages.push(m)
  }
  const sent = await producer.send({ topic: TOPIC, acks: -1, compression: CompressionTypes.GZIP, messages })
  result('produced', { responses: sent })
  await producer.disconnect()

  const consumer = kafka.consumer({ groupId: 'kjs-group', sessionTimeout: 10000, heartbeatInterval: 1000,
                                    maxWaitTimeInMs: 500 })
  await consumer.connect()
  await consumer.subscribe({ topics: [TOPIC], fromBeginning: true })
  let got = 0
  const next = {}
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => resolve(), 30000)
    consumer.run({
      autoCommit: false,
      eachMessage: async ({ topic, partition, message }) => {
        got++
        const headers = {}
        for (const [k, v] of Object.entries(message.headers || {})) headers[k] = v.toString()
        result('consumed', { topic, partition, offset: Number(message.offset),
                             key: message.key === null ? null : message.key.toString(),
                             value_len: message.value.length, headers })
        next[partition] = Number(message.offset) + 1
        if (got === N_RECORDS) { clearTimeout(timer); resolve() }
      }
    }).catch(reject)
  })
  result('consumed_total', { group: 'kjs-group', records: got })
  // One OffsetCommit for both partitions, while still in the group.
  await consumer.commitOffsets(Object.entries(next).map(([p, o]) =>
    ({ topic: TOPIC, partition: Number(p), offset: String(o) })))
  await new Promise(resolve => setTimeout(resolve, 1500)) // a Heartbeat
  await consumer.disconnect() // LeaveGroup
  const admin = kafka.admin()
  await admin.connect()
  const committed = await admin.fetchOffsets({ groupId: 'kjs-group', topics: [TOPIC] })
  result('committed', { group: 'kjs-group', offsets: committed })
  await admin.disconnect()
}

async function main () {
  const [bootstrap, step] = process.argv.slice(2)
  result('versions', { kafkajs: require('kafkajs/package.json').version, node: process.version })
  await ({ setup, admin: adminStep, group: groupStep })[step](bootstrap)
}

main().catch(e => { console.error(e); process.exit(1) })
