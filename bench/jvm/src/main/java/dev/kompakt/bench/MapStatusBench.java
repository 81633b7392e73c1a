package dev.kompakt.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.apache.spark.MapOutputTracker$;
import org.apache.spark.SparkConf;
import org.apache.spark.scheduler.MapStatus;
import org.apache.spark.storage.BlockManagerId;
import org.apache.spark.storage.BlockManagerId$;

import scala.Option;

/**
 * MapStatus serialization through Spark's own code path, the seed measurement of Spark PR 26085
 * redone: {@code MapOutputTracker.serializeOutputStatuses} (ObjectOutputStream over the codec of
 * {@code spark.shuffle.mapStatus.compression.codec}, never broadcast) and {@code
 * deserializeOutputStatuses}, for N map outputs of B blocks each, made like Spark's
 * MapStatusesSerDeserBenchmark: one BlockManagerId per map ("node$i"), block sizes uniform in
 * 0..1 GB from scala.util.Random(912)'s doubles (java.util.Random(912) gives the same doubles).
 *
 * <pre>--codec LABEL --maps 20000 --blocks 500,5 --warmup 1.0 --seconds 2.0 --min-iters 3 [--dump-raw DIR]</pre>
 */
public final class MapStatusBench {
  private MapStatusBench() {}

  static MapStatus[] statuses(int maps, int blocks) {
    Random r = new Random(912);
    MapStatus[] out = new MapStatus[maps];
    for (int i = 0; i < maps; i++) {
      long[] sizes = new long[blocks];
      for (int b = 0; b < blocks; b++) {
        sizes[b] = (long) (r.nextDouble() * 1024 * 1024 * 1024);
      }
      BlockManagerId loc =
          BlockManagerId$.MODULE$.apply("node" + i, "node" + i + ".spark.apache.org", 1000, Option.empty());
      out[i] = MapStatus.apply(loc, sizes, i, i * 100L);
    }
    return out;
  }

  public static void main(String[] argv) throws Exception {
    Map<String, String> a = Out.args(argv);
    String label = a.getOrDefault("codec", "zstd");
    int maps = Integer.parseInt(a.getOrDefault("maps", "20000"));
    double warmup = Double.parseDouble(a.getOrDefault("warmup", "1.0"));
    double seconds = Double.parseDouble(a.getOrDefault("seconds", "2.0"));
    int minIters = Integer.parseInt(a.getOrDefault("min-iters", "3"));
    SparkConf conf = Codecs.conf(label, "spark.shuffle.mapStatus.compression.codec");
    var tracker = MapOutputTracker$.MODULE$;

    for (String bs : a.getOrDefault("blocks", "500,5").split(",")) {
      int blocks = Integer.parseInt(bs.trim());
      MapStatus[] st = statuses(maps, blocks);
      String kind = st[0].getClass().getSimpleName();

      if (a.containsKey("dump-raw")) {
        // The uncompressed ObjectOutputStream bytes the codec sees, for a look with other tools.
        java.nio.file.Path out = java.nio.file.Path.of(a.get("dump-raw"), "mapstatus_" + maps + "x" + blocks + ".bin");
        try (var oos = new java.io.ObjectOutputStream(new java.io.BufferedOutputStream(java.nio.file.Files.newOutputStream(out)))) {
          oos.writeObject(st);
        }
      }
      byte[] ser = tracker.serializeOutputStatuses(st, null, true, Integer.MAX_VALUE, conf)._1();
      MapStatus[] back = tracker.deserializeOutputStatuses(ser, conf);
      if (back.length != maps || back[maps - 1].getSizeForBlock(blocks - 1) != st[maps - 1].getSizeForBlock(blocks - 1)) {
        throw new AssertionError("round trip differs for " + label);
      }

      double[] serMs = time(() -> tracker.serializeOutputStatuses(st, null, true, Integer.MAX_VALUE, conf), warmup, seconds, minIters);
      double[] deMs = time(() -> {
        MapStatus[] got = tracker.deserializeOutputStatuses(ser, conf);
        if (got.length != maps) {
          throw new AssertionError();
        }
      }, warmup, seconds, minIters);
      Out.emit(Out.rec(
          "kind", "mapstatus",
          "codec", label,
          "maps", maps,
          "blocks", blocks,
          "status_class", kind,
          "bytes", ser.length,
          "ser_ms_best", Out.min(serMs),
          "ser_ms_median", Out.median(serMs),
          "ser_iters", serMs.length,
          "deser_ms_best", Out.min(deMs),
          "deser_ms_median", Out.median(deMs),
          "deser_iters", deMs.length,
          "ser_ms_all", serMs,
          "deser_ms_all", deMs));
    }
  }

  interface Body {
    void run() throws Exception;
  }

  /** Runs body for warmup seconds, then at least minIters times and for seconds; ms per call. */
  static double[] time(Body body, double warmup, double seconds, int minIters) throws Exception {
    long end = System.nanoTime() + (long) (warmup * 1e9);
    do {
      body.run();
    } while (System.nanoTime() < end);
    List<Double> ms = new ArrayList<>();
    long stop = System.nanoTime() + (long) (seconds * 1e9);
    while (ms.size() < minIters || System.nanoTime() < stop) {
      long t0 = System.nanoTime();
      body.run();
      ms.add((System.nanoTime() - t0) / 1e6);
    }
    return ms.stream().mapToDouble(Double::doubleValue).toArray();
  }
}
