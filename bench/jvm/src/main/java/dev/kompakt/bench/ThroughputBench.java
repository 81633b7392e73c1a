package dev.kompakt.bench;

import java.io.BufferedOutputStream;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import org.apache.spark.io.CompressionCodec;

/**
 * A codec's speed through Spark's API on one thread: {@code compressedOutputStream} fed with
 * --write-byte writes (32 KB, a serializer's buffer) over a 32 KB BufferedOutputStream into
 * memory (DiskBlockObjectWriter's buffered file stream, without the file), and {@code
 * compressedInputStream} read back with --read-byte reads (4 KB). Every round makes a new stream,
 * as Spark does per block. Times are wall clock of the calling thread; cpu is the process's CPU
 * time over the same rounds (it shows a codec's own threads, and GC).
 *
 * <p>Then the cost of a stream itself, which shuffles pay once per map task and reduce partition:
 * bytes of an empty stream and of 100 B / 1 KB streams, and microseconds to create, write 1 KB
 * and close, and to open and read back such a stream.
 *
 * <pre>--codec LABEL --inputs a.csv,b.bin --write-bytes 32768 --read-bytes 4096 --seconds 2 --min-rounds 2 --max-rounds 5</pre>
 */
public final class ThroughputBench {
  private ThroughputBench() {}

  public static void main(String[] argv) throws Exception {
    Map<String, String> a = Out.args(argv);
    String label = a.getOrDefault("codec", "lz4");
    int writeBytes = Integer.parseInt(a.getOrDefault("write-bytes", "32768"));
    int readBytes = Integer.parseInt(a.getOrDefault("read-bytes", "4096"));
    double seconds = Double.parseDouble(a.getOrDefault("seconds", "2"));
    int minRounds = Integer.parseInt(a.getOrDefault("min-rounds", "2"));
    int maxRounds = Integer.parseInt(a.getOrDefault("max-rounds", "5"));
    CompressionCodec codec = Codecs.create(label);

    for (String in : a.getOrDefault("inputs", "").split(",")) {
      if (in.isBlank()) {
        continue;
      }
      Path path = Path.of(in.trim());
      byte[] data = Files.readAllBytes(path);
      Sink sink = new Sink(data.length + data.length / 4 + (4 << 20));

      // Compress.
      List<Double> cMs = new ArrayList<>();
      long cpu0 = Out.processCpuNanos();
      long start = System.nanoTime();
      while (cMs.size() < minRounds || (cMs.size() < maxRounds && System.nanoTime() - start < seconds * 1e9)) {
        cMs.add(compressOnce(codec, data, sink, writeBytes));
      }
      double cCpuMs = (Out.processCpuNanos() - cpu0) / 1e6;
      double cWallMs = cMs.stream().mapToDouble(Double::doubleValue).sum();
      byte[] comp = sink.toByteArray();

      // Decompress, checking the first round's bytes.
      byte[] buf = new byte[readBytes];
      byte[] check = new byte[data.length];
      List<Double> dMs = new ArrayList<>();
      long cpu1 = Out.processCpuNanos();
      start = System.nanoTime();
      while (dMs.size() < minRounds || (dMs.size() < maxRounds && System.nanoTime() - start < seconds * 1e9)) {
        dMs.add(decompressOnce(codec, comp, data, buf, dMs.isEmpty() ? check : null));
      }
      double dCpuMs = (Out.processCpuNanos() - cpu1) / 1e6;
      double dWallMs = dMs.stream().mapToDouble(Double::doubleValue).sum();
      double[] c = cMs.stream().mapToDouble(Double::doubleValue).toArray();
      double[] d = dMs.stream().mapToDouble(Double::doubleValue).toArray();
      double mb = data.length / 1e6;
      Out.emit(Out.rec(
          "kind", "throughput",
          "codec", label,
          "input", path.getFileName().toString(),
          "bytes", data.length,
          "compressed", comp.length,
          "ratio", (double) data.length / comp.length,
          "c_mbs_best", mb / (Out.min(c) / 1e3),
          "c_mbs_median", mb / (Out.median(c) / 1e3),
          "d_mbs_best", mb / (Out.min(d) / 1e3),
          "d_mbs_median", mb / (Out.median(d) / 1e3),
          "c_cores", cCpuMs / cWallMs,
          "d_cores", dCpuMs / dWallMs,
          "c_ms_all", c,
          "d_ms_all", d,
          "write_bytes", writeBytes,
          "read_bytes", readBytes));
    }

    if (Boolean.parseBoolean(a.getOrDefault("stream-cost", "true"))) {
      streamCost(label, codec, seconds);
    }
  }

  /** One compression of data through codec into sink (reset first); milliseconds. */
  static double compressOnce(CompressionCodec codec, byte[] data, Sink sink, int writeBytes) throws IOException {
    sink.reset();
    long t0 = System.nanoTime();
    OutputStream os = codec.compressedOutputStream(new BufferedOutputStream(sink, 32 * 1024));
    for (int off = 0; off < data.length; off += writeBytes) {
      os.write(data, off, Math.min(writeBytes, data.length - off));
    }
    os.close();
    return (System.nanoTime() - t0) / 1e6;
  }

  /** One decompression of comp; milliseconds; checks the length, and the bytes when check != null. */
  static double decompressOnce(CompressionCodec codec, byte[] comp, byte[] data, byte[] buf, byte[] check)
      throws IOException {
    long t0 = System.nanoTime();
    long total = 0;
    try (InputStream is = codec.compressedInputStream(new ByteArrayInputStream(comp))) {
      int n;
      while ((n = is.read(buf, 0, buf.length)) > 0) {
        if (check != null) {
          System.arraycopy(buf, 0, check, (int) total, n);
        }
        total += n;
      }
    }
    double ms = (System.nanoTime() - t0) / 1e6;
    if (total != data.length || (check != null && !Arrays.equals(check, data))) {
      throw new AssertionError(codec + ": round trip differs (" + total + " bytes)");
    }
    return ms;
  }

  /** Per-stream overhead: bytes of small streams, time to make and to read one. */
  static void streamCost(String label, CompressionCodec codec, double seconds) throws IOException {
    byte[] text = sample(1024);
    Sink sink = new Sink(1 << 20);
    long[] sizes = new long[3];
    int[] lens = {0, 100, 1024};
    byte[][] streams = new byte[3][];
    for (int i = 0; i < 3; i++) {
      sink.reset();
      OutputStream os = codec.compressedOutputStream(sink);
      os.write(text, 0, lens[i]);
      os.close();
      sizes[i] = sink.size();
      streams[i] = sink.toByteArray();
    }
    // Warm up, then time create + write 1 KB + close (into a reused sink), and open + read + close.
    byte[] buf = new byte[4096];
    double[] usWrite = new double[3];
    double[] usRead = new double[3];
    for (int round = 0; round < 3; round++) {
      long n = 0;
      long t0 = System.nanoTime();
      long end = t0 + (long) (seconds * 0.25e9);
      do {
        sink.reset();
        OutputStream os = codec.compressedOutputStream(sink);
        os.write(text, 0, 1024);
        os.close();
        n++;
      } while (System.nanoTime() < end);
      usWrite[round] = (System.nanoTime() - t0) / 1e3 / n;
      n = 0;
      t0 = System.nanoTime();
      end = t0 + (long) (seconds * 0.25e9);
      do {
        try (InputStream is = codec.compressedInputStream(new ByteArrayInputStream(streams[2]))) {
          while (is.read(buf, 0, buf.length) > 0) {
            // drain
          }
        }
        n++;
      } while (System.nanoTime() < end);
      usRead[round] = (System.nanoTime() - t0) / 1e3 / n;
    }
    Out.emit(Out.rec(
        "kind", "stream_cost",
        "codec", label,
        "empty_bytes", sizes[0],
        "b100_bytes", sizes[1],
        "kb1_bytes", sizes[2],
        "us_write_1kb", Out.min(usWrite),
        "us_read_1kb", Out.min(usRead)));
  }

  /** 1 KB of text-like bytes (a CSV line repeated with changing numbers). */
  static byte[] sample(int len) {
    StringBuilder sb = new StringBuilder();
    int i = 0;
    while (sb.length() < len) {
      sb.append(2013).append(',').append(1 + i % 12).append(',').append(1 + i % 28).append(',')
          .append(517 + 13 * i).append(",UA,").append(1545 + i * 7).append(",N14228,EWR,IAH,227\n");
      i++;
    }
    return sb.substring(0, len).getBytes(java.nio.charset.StandardCharsets.US_ASCII);
  }

  /** A reusable in-memory sink (no growth and no copies while timed). */
  static final class Sink extends OutputStream {
    private byte[] buf;
    private int size;

    Sink(int capacity) {
      buf = new byte[capacity];
    }

    void reset() {
      size = 0;
    }

    int size() {
      return size;
    }

    byte[] toByteArray() {
      return Arrays.copyOf(buf, size);
    }

    @Override
    public void write(int b) {
      ensure(1);
      buf[size++] = (byte) b;
    }

    @Override
    public void write(byte[] b, int off, int len) {
      ensure(len);
      System.arraycopy(b, off, buf, size, len);
      size += len;
    }

    private void ensure(int n) {
      if (size + n > buf.length) {
        buf = Arrays.copyOf(buf, Math.max(buf.length * 2, size + n));
      }
    }
  }
}
