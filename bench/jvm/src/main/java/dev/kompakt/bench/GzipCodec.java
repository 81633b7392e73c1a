package dev.kompakt.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;

import org.apache.spark.SparkConf;
import org.apache.spark.io.CompressionCodec;

/**
 * java.util.zip's GZIP streams as a Spark codec, with their defaults (level 6, 512-byte
 * buffers): what Spark before 3.0 wrapped MapStatus in (GZIPOutputStream around the
 * ObjectOutputStream), and the yardstick of the MapStatus comparison. Spark 4.2 has no gzip codec.
 */
public final class GzipCodec implements CompressionCodec {
  public GzipCodec(SparkConf conf) {}

  @Override
  public OutputStream compressedOutputStream(OutputStream s) {
    try {
      return new GZIPOutputStream(s);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public InputStream compressedInputStream(InputStream s) {
    try {
      return new GZIPInputStream(s);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
