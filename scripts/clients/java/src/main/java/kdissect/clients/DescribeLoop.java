package kdissect.clients;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Arrays;

import org.apache.kafka.common.utils.internals.Exit;
import org.apache.kafka.tools.consumer.group.ConsumerGroupCommand;
import org.apache.kafka.tools.consumer.group.ShareGroupCommand;

/**
 * {@code describe-loop consumer|share EVERY_MS STOP_FILE TOOL_ARGS...}: the admin tool's own
 * command (kafka-consumer-groups / kafka-share-groups, i.e. ConsumerGroupCommand or
 * ShareGroupCommand from kafka-tools) run again and again in this one JVM, every EVERY_MS
 * milliseconds, until STOP_FILE exists. Each output sits between "### describe start t=MS" and
 * "### describe end t=MS" lines (epoch ms): one JVM start per sample would take seconds on a
 * loaded machine and blur the moment the figures belong to. The tool's exit calls are turned into
 * an exception so that an error (a group not there yet) ends one round, not the loop.
 * TOOL_ARGS may hold "+" to separate the argument lists of alternate rounds.
 */
final class DescribeLoop {
    private DescribeLoop() {}

    static final class ExitCalled extends RuntimeException {
        ExitCalled(int code) {
            super("exit " + code);
        }
    }

    static void run(String[] args) throws Exception {
        String kind = args[0];
        long every = Long.parseLong(args[1]);
        Path stop = Path.of(args[2]);
        String[] rest = Arrays.copyOfRange(args, 3, args.length);
        String[][] rounds = Arrays.stream(String.join("\u0000", rest).split("\u0000\\+\u0000"))
                .map(s -> s.split("\u0000")).toArray(String[][]::new);
        Exit.setExitProcedure((code, msg) -> {
            throw new ExitCalled(code);
        });
        for (int round = 0; !Files.exists(stop); round++) {
            String[] a = rounds[round % rounds.length];
            long start = System.currentTimeMillis();
            System.out.printf("### describe start t=%d (%s) %s%n", start, Instant.ofEpochMilli(start),
                    String.join(" ", a));
            try {
                if ("share".equals(kind)) ShareGroupCommand.main(a);
                else ConsumerGroupCommand.main(a);
            } catch (ExitCalled e) {
                System.out.println("(tool exit: " + e.getMessage() + ")");
            }
            System.out.flush();
            System.out.printf("### describe end t=%d%n", System.currentTimeMillis());
            long next = start + every;
            while (System.currentTimeMillis() < next && !Files.exists(stop)) Thread.sleep(50);
        }
    }
}
