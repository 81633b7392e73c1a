package dev.kompakt.bench;

import java.util.Map;

import org.apache.spark.MapOutputTrackerMaster;
import org.apache.spark.MapStatusesSerDeserBenchmark$;

/**
 * Spark's own MapStatusesSerDeserBenchmark (from the spark-core tests jar), run with another
 * codec and other sizes. Its suite hardcodes 200,000 maps x 10/100/1000 blocks and builds its
 * SparkContext from {@code new SparkConf()}, which reads spark.* system properties: so this
 * sets {@code spark.shuffle.mapStatus.compression.codec} (and kompakt's options) as system
 * properties, then does what runBenchmarkSuite does before its cases and calls its
 * {@code serDeserBenchmark(numMaps, blockSize, enableBroadcast)} with the sizes asked for.
 * (runBenchmarkSuite also swaps the tracker's RPC endpoint, which the cases do not use.)
 *
 * <pre>--codec LABEL --maps 20000 --blocks 500,5 --broadcast false</pre>
 */
public final class SparkMapStatusBench {
  private SparkMapStatusBench() {}

  public static void main(String[] argv) {
    Map<String, String> a = Out.args(argv);
    String label = a.getOrDefault("codec", "zstd");
    int maps = Integer.parseInt(a.getOrDefault("maps", "20000"));
    Codecs.toSystemProperties(label, "spark.shuffle.mapStatus.compression.codec");
    // What BenchmarkBase.main sets before running a suite.
    System.setProperty("spark.testing", "true");
    System.setProperty("spark.ui.enabled", "false");

    var bench = MapStatusesSerDeserBenchmark$.MODULE$;
    bench.createSparkContext();
    try {
      bench.tracker_$eq((MapOutputTrackerMaster) bench.sc().env().mapOutputTracker());
      System.out.println("@@ {\"kind\": \"spark_mapstatus_start\", \"codec\": \"" + label + "\", \"conf_codec\": \""
          + bench.sc().getConf().get("spark.shuffle.mapStatus.compression.codec") + "\"}");
      for (String bc : a.getOrDefault("broadcast", "false").split(",")) {
        for (String bs : a.getOrDefault("blocks", "500,5").split(",")) {
          bench.serDeserBenchmark(maps, Integer.parseInt(bs.trim()), Boolean.parseBoolean(bc.trim()));
        }
      }
    } finally {
      bench.afterAll();
    }
  }
}
