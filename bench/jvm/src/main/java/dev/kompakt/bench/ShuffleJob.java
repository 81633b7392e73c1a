package dev.kompakt.bench;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.concat;
import static org.apache.spark.sql.functions.count;
import static org.apache.spark.sql.functions.hash;
import static org.apache.spark.sql.functions.lit;
import static org.apache.spark.sql.functions.max;
import static org.apache.spark.sql.functions.pmod;
import static org.apache.spark.sql.functions.sum;
import static org.apache.spark.sql.functions.xxhash64;

import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.spark.executor.TaskMetrics;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * A shuffle-heavy Spark SQL job in local[2] with {@code spark.io.compression.codec} set to a
 * codec label; one SparkSession, one run per --repeat, wall time of the actions and the task
 * metrics summed by a SparkListener.
 *
 * <p>--mode job (default): facts = --rows rows (key = pmod(hash(id), 1M), value = pmod(hash(id,
 * 2), 1e8) as long, s = "user" + pmod(hash(id, 3), 100k)) in 8 partitions, dim = 1M rows (key,
 * name = "name" + key % 50k, w = key % 97) in 4. Two actions, each reduced to a row count and a sum of row hashes (collected; the same for every codec):
 * facts.groupBy(key).agg(sum(value), count, max(s)) joined with dim on key, and facts joined with
 * dim on key, grouped by name (sum(value), count, max(s)). Broadcast joins off; Spark's defaults
 * otherwise (AQE on, 200 shuffle partitions: the bypass-merge-sort writer, AQE coalescing and
 * batch fetch).
 *
 * <p>--mode spill: facts.repartition(400, key), reduced the same way, with 400 shuffle partitions
 * (above spark.shuffle.sort.bypassMergeThreshold, so the UnsafeShuffleWriter) and
 * spark.shuffle.spill.numElementsForceSpillThreshold = --spill-every (500k): every map task of
 * 1.25M rows spills three times and merges the spills, by concatenating the compressed
 * partitions (fast merge: only for codecs that Spark's supportsConcatenationOfSerializedStreams
 * names) or by decompressing and compressing them again (slow merge).
 *
 * <pre>--codec LABEL --mode job|spill --rows 10000000 --repeat 1</pre>
 */
public final class ShuffleJob {
  private ShuffleJob() {}

  static final class Metrics extends SparkListener {
    final AtomicLong tasks = new AtomicLong();
    final AtomicLong shuffleBytesWritten = new AtomicLong();
    final AtomicLong shuffleRecordsWritten = new AtomicLong();
    final AtomicLong shuffleWriteNanos = new AtomicLong();
    final AtomicLong shuffleBytesRead = new AtomicLong();
    final AtomicLong shuffleBlocksFetched = new AtomicLong();
    final AtomicLong fetchWaitMs = new AtomicLong();
    final AtomicLong memorySpilled = new AtomicLong();
    final AtomicLong diskSpilled = new AtomicLong();
    final AtomicLong executorRunMs = new AtomicLong();
    final AtomicLong executorCpuNanos = new AtomicLong();
    final AtomicLong gcMs = new AtomicLong();

    @Override
    public void onTaskEnd(SparkListenerTaskEnd end) {
      TaskMetrics m = end.taskMetrics();
      if (m == null) {
        return;
      }
      tasks.incrementAndGet();
      shuffleBytesWritten.addAndGet(m.shuffleWriteMetrics().bytesWritten());
      shuffleRecordsWritten.addAndGet(m.shuffleWriteMetrics().recordsWritten());
      shuffleWriteNanos.addAndGet(m.shuffleWriteMetrics().writeTime());
      shuffleBytesRead.addAndGet(m.shuffleReadMetrics().totalBytesRead());
      shuffleBlocksFetched.addAndGet(m.shuffleReadMetrics().totalBlocksFetched());
      fetchWaitMs.addAndGet(m.shuffleReadMetrics().fetchWaitTime());
      memorySpilled.addAndGet(m.memoryBytesSpilled());
      diskSpilled.addAndGet(m.diskBytesSpilled());
      executorRunMs.addAndGet(m.executorRunTime());
      executorCpuNanos.addAndGet(m.executorCpuTime());
      gcMs.addAndGet(m.jvmGCTime());
    }

    void reset() {
      for (AtomicLong x : new AtomicLong[] {tasks, shuffleBytesWritten, shuffleRecordsWritten, shuffleWriteNanos,
          shuffleBytesRead, shuffleBlocksFetched, fetchWaitMs, memorySpilled, diskSpilled, executorRunMs,
          executorCpuNanos, gcMs}) {
        x.set(0);
      }
    }
  }

  public static void main(String[] argv) throws Exception {
    Map<String, String> a = Out.args(argv);
    String label = a.getOrDefault("codec", "lz4");
    String mode = a.getOrDefault("mode", "job");
    long rows = Long.parseLong(a.getOrDefault("rows", "10000000"));
    int repeat = Integer.parseInt(a.getOrDefault("repeat", "1"));
    long spillEvery = Long.parseLong(a.getOrDefault("spill-every", "500000"));
    String local = a.getOrDefault("master", "local[2]");

    long t0 = System.nanoTime();
    SparkSession.Builder b = SparkSession.builder()
        .master(local)
        .appName("kompakt-shuffle-" + mode)
        .config("spark.ui.enabled", "false")
        .config("spark.sql.autoBroadcastJoinThreshold", "-1")
        .config("spark.local.dir", a.getOrDefault("local-dir", System.getProperty("java.io.tmpdir")));
    if (mode.equals("spill")) {
      b.config("spark.sql.shuffle.partitions", "400")
          .config("spark.sql.adaptive.enabled", "false")
          .config("spark.shuffle.spill.numElementsForceSpillThreshold", Long.toString(spillEvery));
    }
    for (Map.Entry<String, String> e : Codecs.settings(label, "spark.io.compression.codec").entrySet()) {
      b.config(e.getKey(), e.getValue());
    }
    SparkSession spark = b.getOrCreate();
    spark.sparkContext().setLogLevel("WARN");
    Metrics metrics = new Metrics();
    spark.sparkContext().addSparkListener(metrics);
    double startupMs = (System.nanoTime() - t0) / 1e6;
    String codecClass = spark.sparkContext().getConf().get("spark.io.compression.codec");
    var codec = org.apache.spark.io.CompressionCodec$.MODULE$.createCodec(spark.sparkContext().getConf());
    boolean concat = org.apache.spark.io.CompressionCodec$.MODULE$.supportsConcatenationOfSerializedStreams(codec);

    long warmupRows = Long.parseLong(a.getOrDefault("warmup-rows", "0"));
    for (int run = warmupRows > 0 ? 0 : 1; run <= repeat; run++) {
      runOnce(spark, metrics, label, codecClass, concat, mode, run == 0 ? warmupRows : rows, run, startupMs);
    }
    spark.stop();
  }

  /**
   * The action: rows, and the sum of a hash of every row's columns (a check that every codec's
   * job computed the same result; the aggregate adds one tiny shuffle).
   */
  static String digest(Dataset<Row> df, String... columns) {
    Column[] cols = new Column[columns.length];
    for (int i = 0; i < columns.length; i++) {
      cols[i] = col(columns[i]);
    }
    Row r = df.agg(count(lit(1)), sum(pmod(xxhash64(cols), lit(1_000_000_007L)))).collectAsList().get(0);
    return r.getLong(0) + ":" + Long.toHexString(r.isNullAt(1) ? 0 : r.getLong(1));
  }

  static Dataset<Row> facts(SparkSession spark, long rows) {
    return spark.range(0, rows, 1, 8).select(
        pmod(hash(col("id")), lit(1_000_000)).as("key"),
        pmod(hash(col("id"), lit(2)), lit(100_000_000)).cast("long").as("value"),
        concat(lit("user"), pmod(hash(col("id"), lit(3)), lit(100_000)).cast("string")).as("s"));
  }

  static void runOnce(SparkSession spark, Metrics metrics, String label, String codecClass, boolean concat,
      String mode, long rows, int run, double startupMs) throws Exception {
    Dataset<Row> facts = facts(spark, rows);
    Dataset<Row> dim = spark.range(0, 1_000_000, 1, 4).select(
        col("id").cast("int").as("key"),
        concat(lit("name"), col("id").mod(50_000).cast("string")).as("name"),
        col("id").mod(97).cast("int").as("w"));

    {
      metrics.reset();
      spark.sparkContext().listenerBus().waitUntilEmpty();
      metrics.reset();
      long cpu0 = Out.processCpuNanos();
      long r0 = System.nanoTime();
      long r1 = r0;
      StringBuilder digest = new StringBuilder();
      if (mode.equals("spill")) {
        digest.append(digest(facts.repartition(400, col("key")), "key", "value", "s"));
      } else {
        digest.append(digest(
            facts.groupBy("key").agg(sum("value").as("sv"), count(lit(1)).as("n"), max("s").as("ms")).join(dim, "key"),
            "key", "sv", "n", "ms", "name", "w"));
        r1 = System.nanoTime();
        digest.append(' ').append(digest(
            facts.join(dim, "key").groupBy("name").agg(sum("value").as("sv"), count(lit(1)).as("n"), max("s").as("ms")),
            "name", "sv", "n", "ms"));
      }
      double wallMs = (System.nanoTime() - r0) / 1e6;
      double cpuMs = (Out.processCpuNanos() - cpu0) / 1e6;
      spark.sparkContext().listenerBus().waitUntilEmpty();
      Out.emit(Out.rec(
          "kind", "shuffle_" + mode,
          "codec", label,
          "codec_class", codecClass,
          "concatenation", concat,
          "run", run,
          "rows", rows,
          "wall_ms", wallMs,
          "first_action_ms", (r1 - r0) / 1e6,
          "digest", digest.toString(),
          "process_cpu_ms", cpuMs,
          "startup_ms", startupMs,
          "tasks", metrics.tasks.get(),
          "shuffle_bytes_written", metrics.shuffleBytesWritten.get(),
          "shuffle_records_written", metrics.shuffleRecordsWritten.get(),
          "shuffle_write_ms", metrics.shuffleWriteNanos.get() / 1e6,
          "shuffle_bytes_read", metrics.shuffleBytesRead.get(),
          "shuffle_blocks_fetched", metrics.shuffleBlocksFetched.get(),
          "fetch_wait_ms", metrics.fetchWaitMs.get(),
          "memory_spilled", metrics.memorySpilled.get(),
          "disk_spilled", metrics.diskSpilled.get(),
          "executor_run_ms", metrics.executorRunMs.get(),
          "executor_cpu_ms", metrics.executorCpuNanos.get() / 1e6,
          "gc_ms", metrics.gcMs.get()));
    }
  }
}
