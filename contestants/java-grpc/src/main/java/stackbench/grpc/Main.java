package stackbench.grpc;

import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * The stackbench bubble-sort contestant on grpc-java (docs/scenarios.md):
 * sort.v1.SortService/BubbleSort over HTTP/2 cleartext on grpc-netty-shaded.
 *
 * <p>Environment: PORT (required), BIND (default 127.0.0.1). SIGTERM stops
 * accepting and lets the calls in flight finish, for at most 4 seconds.
 */
public final class Main {
    private Main() {}

    public static void main(String[] args) throws Exception {
        String port = System.getenv("PORT");
        if (port == null || port.isEmpty()) {
            fail("set PORT to the port to listen on");
        }
        int portNumber = 0;
        try {
            portNumber = Integer.parseInt(port);
        } catch (NumberFormatException e) {
            fail("PORT=" + port + " is not a port number");
        }
        String bind = System.getenv().getOrDefault("BIND", "127.0.0.1");
        // grpc-java's defaults otherwise: Netty event loops for the I/O, the
        // calls run on its default executor (a cached thread pool), 4 MiB
        // message limit, no interceptors, no logging per call.
        Server server = NettyServerBuilder.forAddress(new InetSocketAddress(bind, portNumber))
                .addService(new SortService())
                .build()
                .start();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.shutdown();
            try {
                if (!server.awaitTermination(4, TimeUnit.SECONDS)) {
                    server.shutdownNow();
                }
            } catch (InterruptedException e) {
                server.shutdownNow();
            }
            System.err.println("java-grpc: stopped");
        }, "shutdown"));
        Runtime rt = Runtime.getRuntime();
        String gcs = ManagementFactory.getGarbageCollectorMXBeans().stream()
                .map(GarbageCollectorMXBean::getName)
                .collect(Collectors.joining(", "));
        System.err.printf(
                "java-grpc: sort.v1.SortService (bubble sort, at most %d numbers) on h2c %s:%d; Java %s, %d CPU(s), max heap %d MiB, GC %s%n",
                SortService.MAX_LEN, bind, server.getPort(), Runtime.version(), rt.availableProcessors(),
                rt.maxMemory() >> 20, gcs);
        server.awaitTermination();
    }

    private static void fail(String message) {
        System.err.println("java-grpc: " + message);
        System.exit(2);
    }
}
