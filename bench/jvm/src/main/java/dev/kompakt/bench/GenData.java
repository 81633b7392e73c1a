package dev.kompakt.bench;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.SplittableRandom;

import org.apache.spark.SparkConf;
import org.apache.spark.serializer.KryoSerializer;
import org.apache.spark.serializer.SerializationStream;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.execution.UnsafeRowSerializer;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;

import scala.Tuple2;
import scala.reflect.ClassTag;
import scala.reflect.ClassTag$;

/**
 * Binary shuffle-like streams, as Spark's serializers write them, from one fixed seed:
 *
 * <ul>
 *   <li>{@code unsaferow.bin}: SQL shuffle records, rows (key int, value long, s string) as
 *       UnsafeRowSerializer writes them (an int length, then the UnsafeRow: null bits, three
 *       8-byte words, the string padded to 8 bytes).
 *   <li>{@code kryo.bin}: RDD shuffle records, key Integer and value Tuple2(Long, String), through
 *       KryoSerializer's serialization stream (writeKey, writeValue).
 * </ul>
 *
 * key: uniform in 0..1M; value: uniform in 0..1e8 (an amount in cents); s: "user" + uniform in
 * 0..100k (8-10 bytes). Both files stop at the first record past --mb megabytes.
 *
 * <pre>--out DIR --mb 128</pre>
 */
public final class GenData {
  private GenData() {}

  public static void main(String[] argv) throws IOException {
    Map<String, String> a = Out.args(argv);
    Path dir = Path.of(a.getOrDefault("out", "bench/data/spark_codec"));
    long limit = (long) (Double.parseDouble(a.getOrDefault("mb", "128")) * 1e6);
    Files.createDirectories(dir);

    Path rows = dir.resolve("unsaferow.bin");
    if (!Files.exists(rows)) {
      Path tmp = dir.resolve("unsaferow.bin.tmp");
      StructType schema = new StructType()
          .add("key", DataTypes.IntegerType)
          .add("value", DataTypes.LongType)
          .add("s", DataTypes.StringType);
      UnsafeProjection proj = UnsafeProjection.create(schema);
      SplittableRandom rnd = new SplittableRandom(20261206L);
      ClassTag<Object> tag = ClassTag$.MODULE$.Any();
      long n = 0;
      try (CountingStream cs = new CountingStream(new BufferedOutputStream(Files.newOutputStream(tmp), 1 << 16))) {
        SerializationStream ss = new UnsafeRowSerializer(3, null).newInstance().serializeStream(cs);
        while (cs.count < limit) {
          InternalRow r = new GenericInternalRow(new Object[] {
              rnd.nextInt(1_000_000), (long) rnd.nextInt(100_000_000),
              UTF8String.fromString("user" + rnd.nextInt(100_000))});
          UnsafeRow u = proj.apply(r);
          ss.writeValue(u, tag);
          n++;
          if ((n & 0xFFFF) == 0) {
            ss.flush();
          }
        }
        ss.close();
      }
      Files.move(tmp, rows);
      System.out.println("wrote " + rows + ": " + n + " rows, " + Files.size(rows) + " bytes");
    }

    Path kryo = dir.resolve("kryo.bin");
    if (!Files.exists(kryo)) {
      Path tmp = dir.resolve("kryo.bin.tmp");
      KryoSerializer ser = new KryoSerializer(new SparkConf(false));
      SplittableRandom rnd = new SplittableRandom(20261207L);
      ClassTag<Object> tag = ClassTag$.MODULE$.Any();
      long n = 0;
      try (CountingStream cs = new CountingStream(new BufferedOutputStream(Files.newOutputStream(tmp), 1 << 16))) {
        SerializationStream ss = ser.newInstance().serializeStream(cs);
        while (cs.count < limit) {
          ss.writeKey(Integer.valueOf(rnd.nextInt(1_000_000)), tag);
          ss.writeValue(new Tuple2<Object, Object>(Long.valueOf(rnd.nextInt(100_000_000)), "user" + rnd.nextInt(100_000)), tag);
          n++;
          if ((n & 0xFFFF) == 0) {
            ss.flush();
          }
        }
        ss.close();
      }
      Files.move(tmp, kryo);
      System.out.println("wrote " + kryo + ": " + n + " records, " + Files.size(kryo) + " bytes");
    }
  }

  /** Counts the bytes that reach the file (what the serializer has flushed). */
  static final class CountingStream extends OutputStream {
    final OutputStream out;
    long count;

    CountingStream(OutputStream out) {
      this.out = out;
    }

    @Override
    public void write(int b) throws IOException {
      out.write(b);
      count++;
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
      out.write(b, off, len);
      count += len;
    }

    @Override
    public void flush() throws IOException {
      out.flush();
    }

    @Override
    public void close() throws IOException {
      out.close();
    }
  }
}
