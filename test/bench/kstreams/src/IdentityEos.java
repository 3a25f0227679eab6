import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Produced;

/**
 * The Kafka Streams peer of the bench's eos-passthrough row: an identity topology
 * (bytes in, the same bytes out, no deserialisation) with exactly_once_v2, the
 * guarantee the project's loop gives. Everything else is Kafka Streams' default,
 * as a team adopting it would run it.
 *
 *   java -cp <classes>:<lib>/* IdentityEos <bootstrap> <input> <output> <applicationId> [threads]
 *
 * Prints one JSON line {"consuming": <epoch ms>} once the instance is RUNNING
 * (tasks assigned), as test/bench/processor-process.ts does, then runs until
 * SIGTERM.
 */
public final class IdentityEos {
  public static void main(String[] args) throws InterruptedException {
    if (args.length < 4) {
      System.err.println("usage: IdentityEos <bootstrap> <input> <output> <applicationId> [threads]");
      System.exit(2);
    }
    Properties props = new Properties();
    props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
    props.put(StreamsConfig.APPLICATION_ID_CONFIG, args[3]);
    props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
    props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, args.length > 4 ? Integer.parseInt(args[4]) : 1);
    props.put(StreamsConfig.STATE_DIR_CONFIG, System.getProperty("java.io.tmpdir") + "/kstreams-bench-" + args[3]);
    // The input topic is filled before the processor starts: read it from the beginning.
    props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    // Internal topics (there are none in an identity topology) would take the broker's replication default.
    props.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, -1);

    StreamsBuilder builder = new StreamsBuilder();
    builder.stream(args[1], Consumed.with(Serdes.ByteArray(), Serdes.ByteArray()))
        .to(args[2], Produced.with(Serdes.ByteArray(), Serdes.ByteArray()));

    KafkaStreams streams = new KafkaStreams(builder.build(), props);
    CountDownLatch stopped = new CountDownLatch(1);
    streams.setStateListener((next, previous) -> {
      if (next == KafkaStreams.State.RUNNING && previous == KafkaStreams.State.REBALANCING) {
        System.out.println("{\"consuming\": " + System.currentTimeMillis() + "}");
        System.out.flush();
      }
      if (next == KafkaStreams.State.ERROR || next == KafkaStreams.State.NOT_RUNNING) stopped.countDown();
    });
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      streams.close(Duration.ofSeconds(10));
      stopped.countDown();
    }));
    streams.start();
    stopped.await();
  }
}
