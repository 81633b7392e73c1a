package dev.kompakt.bench;

import java.io.InputStream;
import java.io.OutputStream;

import org.apache.spark.SparkConf;
import org.apache.spark.io.CompressionCodec;
import org.apache.spark.io.CompressionCodec$;
import org.apache.spark.io.LZ4CompressionCodec;

/**
 * An experiment, not a product: kompakt's codec behind a subclass of Spark's LZ4 codec.
 * Spark 4.2's CompressionCodec.supportsConcatenationOfSerializedStreams is four {@code
 * instanceof} checks (Snappy, LZF, LZ4, ZStd codec classes), so a subclass passes them, and the
 * shuffle's fast spill merge and batch fetch then concatenate kompakt streams, which
 * KompaktCompressionCodec's input streams read as one (KompaktInputStream.concatenated). This
 * measures what kompakt loses to the check alone. Every stream is kompakt's; LZ4's constructor
 * only reads its block size.
 */
public final class ConcatKompaktCodec extends LZ4CompressionCodec {
  private final CompressionCodec kompakt;

  public ConcatKompaktCodec(SparkConf conf) {
    super(conf);
    kompakt = CompressionCodec$.MODULE$.createCodec(conf, Codecs.KOMPAKT_CLASS);
  }

  @Override
  public OutputStream compressedOutputStream(OutputStream s) {
    return kompakt.compressedOutputStream(s);
  }

  @Override
  public InputStream compressedInputStream(InputStream s) {
    return kompakt.compressedInputStream(s);
  }

  @Override
  public OutputStream compressedContinuousOutputStream(OutputStream s) {
    return kompakt.compressedContinuousOutputStream(s);
  }

  @Override
  public InputStream compressedContinuousInputStream(InputStream s) {
    return kompakt.compressedContinuousInputStream(s);
  }
}
