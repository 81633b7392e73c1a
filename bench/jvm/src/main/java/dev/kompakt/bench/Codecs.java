package dev.kompakt.bench;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

import org.apache.spark.SparkConf;
import org.apache.spark.io.CompressionCodec;
import org.apache.spark.io.CompressionCodec$;

/**
 * The codecs of the benchmarks, named by labels, turned into Spark settings.
 *
 * <ul>
 *   <li>{@code zstd}, {@code lz4}, {@code snappy}, {@code lzf}: Spark's own codecs by their short
 *       names, with Spark's defaults (zstd level 1, 32 KB buffers; LZ4 and Snappy 32 KB blocks).
 *   <li>{@code gzip}: {@link GzipCodec}, java.util.zip's GZIP streams as Spark 2.x used them for
 *       MapStatus (Spark 4.2 has no gzip codec).
 *   <li>{@code kompakt:SPEC@BLOCK} (optionally {@code /tN}): kompakt's codec with
 *       {@code spark.kompakt.codec=SPEC}, {@code spark.kompakt.blockSize=BLOCK} and
 *       {@code spark.kompakt.threads=N}, e.g. {@code kompakt:lz4@64k}, {@code kompakt:zstd:1@64k}.
 *       {@code kompakt} alone takes the codec's defaults.
 *   <li>A label may end in modifiers, {@code +nofastmerge} ({@code
 *       spark.shuffle.unsafe.fastMergeEnabled=false}), {@code +nobatch}
 *       ({@code spark.sql.adaptive.fetchShuffleBlocksInBatch=false}), {@code +notransferto}
 *       ({@code spark.file.transferTo=false}), and for kompakt {@code +concat}: the codec behind
 *       {@link ConcatKompaktCodec}, which Spark takes for concatenable.
 * </ul>
 */
public final class Codecs {
  public static final String KOMPAKT_CLASS = "dev.kompakt.spark.KompaktCompressionCodec";

  private Codecs() {}

  /** The settings that make {@code codecKey} (a Spark conf key naming a codec) use {@code label}. */
  public static Map<String, String> settings(String label, String codecKey) {
    Map<String, String> out = new LinkedHashMap<>();
    String[] parts = label.split("\\+");
    String base = parts[0];
    boolean concat = false;
    for (int i = 1; i < parts.length; i++) {
      switch (parts[i].toLowerCase(Locale.ROOT)) {
        case "concat" -> concat = true;
        case "nofastmerge" -> out.put("spark.shuffle.unsafe.fastMergeEnabled", "false");
        case "nobatch" -> out.put("spark.sql.adaptive.fetchShuffleBlocksInBatch", "false");
        case "notransferto" -> out.put("spark.file.transferTo", "false");
        default -> throw new IllegalArgumentException("unknown modifier +" + parts[i] + " in " + label);
      }
    }
    if (base.equals("kompakt") || base.startsWith("kompakt:")) {
      out.put(codecKey, concat ? ConcatKompaktCodec.class.getName() : KOMPAKT_CLASS);
      String rest = base.equals("kompakt") ? "" : base.substring("kompakt:".length());
      String threads = null;
      int slash = rest.lastIndexOf("/t");
      if (slash >= 0) {
        threads = rest.substring(slash + 2);
        rest = rest.substring(0, slash);
      }
      String block = null;
      int at = rest.lastIndexOf('@');
      if (at >= 0) {
        block = rest.substring(at + 1);
        rest = rest.substring(0, at);
      }
      if (!rest.isEmpty()) {
        out.put("spark.kompakt.codec", rest);
      }
      if (block != null) {
        out.put("spark.kompakt.blockSize", block);
      }
      if (threads != null) {
        out.put("spark.kompakt.threads", threads);
      }
    } else if (concat) {
      throw new IllegalArgumentException("+concat is for kompakt labels: " + label);
    } else if (base.equals("gzip")) {
      out.put(codecKey, GzipCodec.class.getName());
    } else {
      out.put(codecKey, base);
    }
    return out;
  }

  /** A SparkConf (without system properties) where {@code codecKey} is {@code label}. */
  public static SparkConf conf(String label, String codecKey) {
    SparkConf conf = new SparkConf(false);
    settings(label, codecKey).forEach(conf::set);
    return conf;
  }

  /** The codec of {@code label}, made the way Spark makes it (CompressionCodec.createCodec). */
  public static CompressionCodec create(String label) {
    SparkConf conf = conf(label, "spark.io.compression.codec");
    return CompressionCodec$.MODULE$.createCodec(conf, conf.get("spark.io.compression.codec"));
  }

  /** Copies the settings into system properties, for code that builds {@code new SparkConf()}. */
  public static void toSystemProperties(String label, String codecKey) {
    settings(label, codecKey).forEach(System::setProperty);
  }
}
