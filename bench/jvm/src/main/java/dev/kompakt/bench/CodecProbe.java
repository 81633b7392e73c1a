package dev.kompakt.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import org.apache.spark.SparkConf;
import org.apache.spark.SparkContext;
import org.apache.spark.io.CompressionCodec;
import org.apache.spark.io.CompressionCodec$;

/**
 * What Spark 4.2 does with a codec name, asked of Spark itself: which names createCodec
 * accepts, which codecs supportsConcatenationOfSerializedStreams names (the gate of the shuffle's
 * fast merge and batch fetch), whether getShortName (what SparkContext and the event log writer
 * call on spark.eventLog.compression.codec) knows the codec, and whether a SparkContext with a
 * compressed event log starts with the codec.
 *
 * <pre>--codecs zstd,lz4,snappy,lzf,gzip,kompakt:lz4@64k --eventlog-dir DIR</pre>
 */
public final class CodecProbe {
  private CodecProbe() {}

  public static void main(String[] argv) throws Exception {
    Map<String, String> a = Out.args(argv);
    var cc = CompressionCodec$.MODULE$;
    for (String label : a.getOrDefault("codecs", "zstd,lz4,snappy,lzf,gzip,kompakt").split(",")) {
      SparkConf conf = Codecs.conf(label, "spark.io.compression.codec");
      String name = conf.get("spark.io.compression.codec");
      String created;
      Boolean concat = null;
      String shortName;
      try {
        CompressionCodec c = cc.createCodec(conf, name);
        created = c.getClass().getName();
        concat = cc.supportsConcatenationOfSerializedStreams(c);
        try {
          shortName = cc.getShortName(c.getClass().getName());
        } catch (RuntimeException e) {
          shortName = "error: " + e.getMessage();
        }
      } catch (RuntimeException e) {
        created = "error: " + e.getMessage();
        shortName = "-";
      }
      Out.emit(Out.rec("kind", "probe", "codec", label, "name", name, "created", created,
          "concatenation", concat, "short_name", shortName));
    }
    // The short name "gzip" (Spark 4.2 has none).
    try {
      cc.createCodec(new SparkConf(false), "gzip");
      Out.emit(Out.rec("kind", "probe_gzip", "result", "accepted"));
    } catch (RuntimeException e) {
      Out.emit(Out.rec("kind", "probe_gzip", "result", "error: " + e.getMessage()));
    }

    // A SparkContext writing a compressed event log with a third-party codec.
    String evDir = a.get("eventlog-dir");
    String label = a.get("eventlog-codec");
    if (evDir != null && label != null) {
      Path dir = Path.of(evDir);
      Files.createDirectories(dir);
      SparkConf conf = Codecs.conf(label, "spark.eventLog.compression.codec")
          .setMaster("local[1]").setAppName("probe")
          .set("spark.ui.enabled", "false")
          .set("spark.eventLog.enabled", "true")
          .set("spark.eventLog.compress", "true")
          .set("spark.eventLog.dir", dir.toUri().toString());
      String result;
      try {
        SparkContext sc = new SparkContext(conf);
        new org.apache.spark.api.java.JavaSparkContext(sc).parallelize(java.util.List.of(1, 2, 3), 1).count();
        sc.stop();
        StringBuilder files = new StringBuilder();
        try (var s = Files.list(dir)) {
          s.forEach(p -> files.append(p.getFileName()).append(' '));
        }
        result = "started; event log files: " + files.toString().trim();
      } catch (Throwable e) {
        result = "error: " + e.getClass().getSimpleName() + ": " + e.getMessage();
      }
      Out.emit(Out.rec("kind", "probe_eventlog", "codec", label, "result", result));
    }
  }
}
