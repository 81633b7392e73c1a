package dev.kompakt.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import org.apache.spark.io.CompressionCodec;

/**
 * ThroughputBench's measurement with all codecs in one JVM, interleaved: round r compresses
 * the input once with every codec (starting with a different codec each round), then
 * decompresses it once with every codec. Codecs measured side by side see the same machine
 * state, which separate JVMs on this VM do not (the same codec's speed moved by up to 60 %
 * between fresh JVMs minutes apart, while rounds within a JVM agreed within a few per cent).
 *
 * <pre>--codecs A,B,C --inputs a.csv,b.bin --rounds 5 --write-bytes 32768 --read-bytes 4096</pre>
 */
public final class ThroughputMixed {
  private ThroughputMixed() {}

  public static void main(String[] argv) throws Exception {
    Map<String, String> a = Out.args(argv);
    String[] labels = a.getOrDefault("codecs", "zstd,lz4").split(",");
    int rounds = Integer.parseInt(a.getOrDefault("rounds", "5"));
    int writeBytes = Integer.parseInt(a.getOrDefault("write-bytes", "32768"));
    int readBytes = Integer.parseInt(a.getOrDefault("read-bytes", "4096"));
    CompressionCodec[] codecs = new CompressionCodec[labels.length];
    for (int i = 0; i < labels.length; i++) {
      codecs[i] = Codecs.create(labels[i]);
    }
    for (String in : a.getOrDefault("inputs", "").split(",")) {
      if (in.isBlank()) {
        continue;
      }
      Path path = Path.of(in.trim());
      byte[] data = Files.readAllBytes(path);
      ThroughputBench.Sink sink = new ThroughputBench.Sink(data.length + data.length / 4 + (4 << 20));
      int n = labels.length;
      double[][] c = new double[n][rounds];
      double[][] d = new double[n][rounds];
      byte[][] comp = new byte[n][];
      byte[] buf = new byte[readBytes];
      byte[] check = new byte[data.length];
      // A first, untimed round per codec: the compressed bytes, a checked round trip, warm code.
      for (int i = 0; i < n; i++) {
        ThroughputBench.compressOnce(codecs[i], data, sink, writeBytes);
        comp[i] = sink.toByteArray();
        ThroughputBench.decompressOnce(codecs[i], comp[i], data, buf, check);
      }
      for (int r = 0; r < rounds; r++) {
        for (int k = 0; k < n; k++) {
          int i = (k + r) % n;
          c[i][r] = ThroughputBench.compressOnce(codecs[i], data, sink, writeBytes);
        }
        for (int k = 0; k < n; k++) {
          int i = (k + r) % n;
          d[i][r] = ThroughputBench.decompressOnce(codecs[i], comp[i], data, buf, null);
        }
      }
      double mb = data.length / 1e6;
      for (int i = 0; i < n; i++) {
        Out.emit(Out.rec(
            "kind", "throughput_mixed",
            "codec", labels[i],
            "input", path.getFileName().toString(),
            "bytes", data.length,
            "compressed", comp[i].length,
            "ratio", (double) data.length / comp[i].length,
            "c_mbs_best", mb / (Out.min(c[i]) / 1e3),
            "c_mbs_median", mb / (Out.median(c[i]) / 1e3),
            "d_mbs_best", mb / (Out.min(d[i]) / 1e3),
            "d_mbs_median", mb / (Out.median(d[i]) / 1e3),
            "c_ms_all", c[i],
            "d_ms_all", d[i]));
      }
    }
  }
}
