import { DEFAULTS } from './options.ts'

export const HELP = `usage: npm run dlq -- <command> [options]

Dead letters: list them by reason, show one decoded and masked, and re-drive the
ones a fix has made processable back to their source topic, exactly once.

commands:
  list                    DLQ records grouped by reason code, source topic and time
                          bucket, with counts and how many were re-driven
  show <partition:offset | key>
                          one record with its headers, the value decoded as Avro with
                          its writer schema from the registry where it decodes (else
                          text or hex); card numbers masked everywhere
  redrive                 the selected records back to their source topics (header
                          ${'tep-redrive-id'} and ${'tep-redrive-from'} = <dlq topic>/<partition>/<offset>),
                          each transaction with an audit record on the ledger topic;
                          a record is re-driven once (the ledger is read first)

selection (list and redrive; all given must hold):
  --reason CODE           dlq.error.code, repeatable or comma-separated; a code no
                          record has is an error (it lists the codes present)
  --since TIME            failed at or after TIME (ISO-8601, epoch ms, or a duration
  --until TIME            ago: 30m, 2h, 1d) / at or before TIME
  --source-topic TOPIC    dlq.source.topic, repeatable
  --ids LIST              (redrive) partition:offset ids, repeatable or comma-separated
  --all                   (redrive) every record on the DLQ

list:
  --bucket DURATION       width of the time buckets (default ${DEFAULTS.bucket})

redrive:
  --dry-run               print what would be re-driven; write nothing
  --max N                 re-drive at most N records (oldest failure first); the rest
                          stays for a later run
  --note TEXT             why (required unless --dry-run), kept in the audit record
  --operator NAME         who (default $USER), kept in the audit record
  --force-again           re-drive records the ledger says were re-driven before
                          (recorded as such in the audit record)
  --per-transaction N     records per Kafka transaction (default ${DEFAULTS.perTransaction})

common:
  --json                  machine-readable output on stdout
  --brokers LIST          host:port,... (default $KAFKA_BROKERS or ${DEFAULTS.brokers})
  --registry URL          Confluent-compatible registry for show (default
                          $SCHEMA_REGISTRY_URL or ${DEFAULTS.registry})
  --dlq-topic TOPIC       default ${DEFAULTS.dlqTopic}
  --audit-topic TOPIC     the re-drive ledger (default ${DEFAULTS.auditTopic})
  --timeout S             give up on an unresponsive broker or registry after S seconds
                          (default ${DEFAULTS.timeoutS}; reading the DLQ may take 10x)
  -h, --help              this text

Progress and notes go to stderr, results to stdout. Kafka TLS and SASL come from
KAFKA_SECURITY_PROTOCOL, KAFKA_SASL_*, KAFKA_SSL_* (docs/security.md), the
registry's credentials from SCHEMA_REGISTRY_USERNAME / SCHEMA_REGISTRY_PASSWORD.

exit status: 0 done, 1 Kafka or registry unreachable or a re-drive stopped part-way
(what was committed is audited; run the same command again), 2 bad options,
3 refused (a second re-drive without --force-again), 4 nothing selected (unknown
reason or id, empty selection).`
