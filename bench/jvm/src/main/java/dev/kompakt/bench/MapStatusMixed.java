package dev.kompakt.bench;

import java.util.Map;

import org.apache.spark.MapOutputTracker$;
import org.apache.spark.SparkConf;
import org.apache.spark.scheduler.MapStatus;

/**
 * MapStatusBench with all codecs in one JVM, interleaved: after a warm-up round of every codec,
 * each round serializes the same MapStatuses once with every codec (in a rotating order), then
 * deserializes once with every codec. Separate JVMs on this VM differ by more than the codecs
 * do; codecs measured side by side see the same machine.
 *
 * <pre>--codecs A,B,C --maps 20000 --blocks 500,5 --rounds 15</pre>
 */
public final class MapStatusMixed {
  private MapStatusMixed() {}

  public static void main(String[] argv) throws Exception {
    Map<String, String> a = Out.args(argv);
    String[] labels = a.getOrDefault("codecs", "zstd,lz4").split(",");
    int maps = Integer.parseInt(a.getOrDefault("maps", "20000"));
    int rounds = Integer.parseInt(a.getOrDefault("rounds", "15"));
    var tracker = MapOutputTracker$.MODULE$;
    int n = labels.length;
    SparkConf[] confs = new SparkConf[n];
    for (int i = 0; i < n; i++) {
      confs[i] = Codecs.conf(labels[i], "spark.shuffle.mapStatus.compression.codec");
    }
    for (String bs : a.getOrDefault("blocks", "500,5").split(",")) {
      int blocks = Integer.parseInt(bs.trim());
      MapStatus[] st = MapStatusBench.statuses(maps, blocks);
      byte[][] ser = new byte[n][];
      double[][] s = new double[n][rounds];
      double[][] d = new double[n][rounds];
      for (int w = 0; w < 3; w++) {
        for (int i = 0; i < n; i++) {
          ser[i] = tracker.serializeOutputStatuses(st, null, true, Integer.MAX_VALUE, confs[i])._1();
          MapStatus[] back = tracker.deserializeOutputStatuses(ser[i], confs[i]);
          if (back.length != maps || back[maps - 1].getSizeForBlock(blocks - 1) != st[maps - 1].getSizeForBlock(blocks - 1)) {
            throw new AssertionError("round trip differs for " + labels[i]);
          }
        }
      }
      for (int r = 0; r < rounds; r++) {
        for (int k = 0; k < n; k++) {
          int i = (k + r) % n;
          long t0 = System.nanoTime();
          tracker.serializeOutputStatuses(st, null, true, Integer.MAX_VALUE, confs[i]);
          s[i][r] = (System.nanoTime() - t0) / 1e6;
        }
        for (int k = 0; k < n; k++) {
          int i = (k + r) % n;
          long t0 = System.nanoTime();
          MapStatus[] got = tracker.deserializeOutputStatuses(ser[i], confs[i]);
          d[i][r] = (System.nanoTime() - t0) / 1e6;
          if (got.length != maps) {
            throw new AssertionError();
          }
        }
      }
      for (int i = 0; i < n; i++) {
        Out.emit(Out.rec(
            "kind", "mapstatus_mixed",
            "codec", labels[i],
            "maps", maps,
            "blocks", blocks,
            "bytes", ser[i].length,
            "ser_ms_best", Out.min(s[i]),
            "ser_ms_median", Out.median(s[i]),
            "deser_ms_best", Out.min(d[i]),
            "deser_ms_median", Out.median(d[i]),
            "ser_ms_all", s[i],
            "deser_ms_all", d[i]));
      }
    }
  }
}
