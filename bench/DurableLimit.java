// The engineering limit of a durable relay on the JVM, for side-by-side runs: a bare Vert.x server that appends each
// POST body to one file, fdatasyncs in groups (one committer thread), answers 202 only after its group is on disk,
// and (with an upstream) then sends each body to the upstream over a keep-alive pool. No Camel, no framing beyond a
// length prefix, no recovery: what the relay's job costs at least with the same libraries and the same disk.
//
//   java -XX:+UseSerialGC -Xmx512m -Xmn64m -cp target/mcpd.jar bench/DurableLimit.java PORT SPOOL_FILE [UPSTREAM_PORT]
//
// The team's yardstick for the relay's cost, kept here as it was given so that bench/cost.py can run it beside the
// relay; do not make it slower or smarter — it is the bar, not a subject.
//
// Runs until stopped; prints "accepted N delivered M" on SIGTERM. Metrics: GET /count answers "accepted delivered".
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.PoolOptions;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicLong;

public class DurableLimit {
  record Pending(HttpServerRequest req, Buffer body, Context ctx) {}

  static final LinkedBlockingQueue<Pending> queue = new LinkedBlockingQueue<>();
  static final AtomicLong accepted = new AtomicLong(), delivered = new AtomicLong();

  public static void main(String[] args) throws Exception {
    int port = Integer.parseInt(args[0]);
    FileChannel file = new RandomAccessFile(args[1], "rw").getChannel();
    int upstream = args.length > 2 ? Integer.parseInt(args[2]) : 0;
    int loops = Runtime.getRuntime().availableProcessors();
    Vertx vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(loops));
    HttpClient client = upstream == 0 ? null : vertx.createHttpClient(
        new HttpClientOptions().setKeepAlive(true).setDefaultHost("127.0.0.1").setDefaultPort(upstream),
        new PoolOptions().setHttp1MaxSize(64));

    Thread committer = new Thread(() -> {
      List<Pending> group = new ArrayList<>();
      try {
        while (true) {
          group.add(queue.take());
          queue.drainTo(group, 255);
          int size = 0;
          for (Pending p : group) size += 4 + p.body().length();
          ByteBuffer out = ByteBuffer.allocate(size);
          for (Pending p : group) out.putInt(p.body().length()).put(p.body().getBytes());
          out.flip();
          while (out.hasRemaining()) file.write(out);
          file.force(false);
          for (Pending p : group) {
            p.ctx().runOnContext(v -> {
              accepted.incrementAndGet();
              p.req().response().setStatusCode(202).putHeader("mcpd-relay", "spooled")
                  .end("{\"accepted\":0,\"duplicate\":0,\"rejected\":0}");
              if (client != null) {
                client.request(HttpMethod.POST, p.req().path())
                    .compose(r -> r.send(p.body()))
                    .onSuccess(r -> { if (r.statusCode() / 100 == 2) delivered.incrementAndGet(); });
              }
            });
          }
          group.clear();
        }
      } catch (Exception e) {
        e.printStackTrace();
      }
    }, "committer");
    committer.setDaemon(true);
    committer.start();

    for (int i = 0; i < loops; i++) {
      vertx.createHttpServer(new HttpServerOptions().setPort(port).setHost("127.0.0.1"))
          .requestHandler(req -> {
            if (req.method() == HttpMethod.GET) {
              req.response().end(accepted.get() + " " + delivered.get() + "\n");
              return;
            }
            Context ctx = Vertx.currentContext();
            req.body().onSuccess(body -> queue.add(new Pending(req, body, ctx)));
          })
          .listen().toCompletionStage().toCompletableFuture().get();
    }
    Runtime.getRuntime().addShutdownHook(new Thread(
        () -> System.out.println("accepted " + accepted.get() + " delivered " + delivered.get())));
    System.out.println("listening " + port);
    Thread.currentThread().join();
  }
}
