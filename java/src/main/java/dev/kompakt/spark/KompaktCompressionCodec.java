package dev.kompakt.spark;

import dev.kompakt.Dictionary;
import dev.kompakt.InvalidOptionException;
import dev.kompakt.KompaktException;
import dev.kompakt.KompaktInputStream;
import dev.kompakt.KompaktOutputStream;
import dev.kompakt.ReadOptions;
import dev.kompakt.WriteOptions;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.spark.SparkConf;
import org.apache.spark.io.CompressionCodec;

/**
 * kompakt as Spark's compression codec: for shuffle outputs and spills, broadcasts, serialized
 * RDD blocks ({@code spark.rdd.compress}), checkpoints and MapStatuses.
 *
 * <pre>{@code
 * spark-submit --jars kompakt-0.1.0.jar \
 *   --conf spark.driver.extraClassPath=kompakt-0.1.0.jar --conf spark.executor.extraClassPath=kompakt-0.1.0.jar \
 *   --conf spark.io.compression.codec=dev.kompakt.spark.KompaktCompressionCodec \
 *   --conf spark.kompakt.codec=lz4 ...
 * }</pre>
 *
 * <p>MapStatuses too ({@code spark.shuffle.mapStatus.compression.codec} set to this class) pay
 * only with a zstd codec: with lz4 they are 1.8 times the size of Spark's zstd (bench/RESULTS.md,
 * "JVM: Spark codec"), and one set of {@code spark.kompakt.*} settings serves every use.
 *
 * <p>Settings (read once, when Spark creates the codec; an invalid one fails at once with an
 * {@link InvalidOptionException} whose message starts with the key):
 *
 * <table>
 *   <caption>spark.kompakt.* settings</caption>
 *   <tr><th>key</th><th>default</th><th>meaning</th></tr>
 *   <tr><td>{@value #CODEC}</td><td>{@value #DEFAULT_CODEC}</td><td>a codec spec ({@code lz4},
 *       {@code zstd:1}, {@code lz4hc:9}, {@code auto}) or a unified level 0-100</td></tr>
 *   <tr><td>{@value #LEVEL}</td><td>none</td><td>a unified level, or with a bare codec name that
 *       codec's level</td></tr>
 *   <tr><td>{@value #BLOCK_SIZE}</td><td>{@value #DEFAULT_BLOCK_SIZE}</td><td>raw bytes per block,
 *       64k to 64m (Spark size syntax); also each stream's buffer</td></tr>
 *   <tr><td>{@value #THREADS}</td><td>1</td><td>threads per stream (Spark already runs a task per
 *       core)</td></tr>
 *   <tr><td>{@value #DICTIONARY}</td><td>none</td><td>the path of a zstd dictionary
 *       ({@code .kpkd}) on every node; the codec must be zstd</td></tr>
 * </table>
 *
 * <p>The input streams read concatenated kompakt files as one stream, but Spark decides from
 * the codec's class whether it may concatenate compressed streams (only its own four codecs
 * qualify), so its fast spill merge and batch fetch of shuffle blocks are off with this codec.
 * Spark 4.2 also refuses any codec but its own four for event logs
 * ({@code spark.eventLog.compression.codec}: CODEC_SHORT_NAME_NOT_FOUND).
 */
public class KompaktCompressionCodec implements CompressionCodec {
    /** The codec spec or unified level. */
    public static final String CODEC = "spark.kompakt.codec";
    /** A level for the codec. */
    public static final String LEVEL = "spark.kompakt.level";
    /** Raw bytes per block. */
    public static final String BLOCK_SIZE = "spark.kompakt.blockSize";
    /** Threads per stream. */
    public static final String THREADS = "spark.kompakt.threads";
    /** The path of a zstd dictionary. */
    public static final String DICTIONARY = "spark.kompakt.dictionary";

    /** The codec when {@value #CODEC} is not set. */
    public static final String DEFAULT_CODEC = "lz4";
    /** The block size when {@value #BLOCK_SIZE} is not set. */
    public static final String DEFAULT_BLOCK_SIZE = "64k";

    /**
     * Options built from each set of settings: Spark creates a codec for every broadcast and
     * MapStatus, so the options (and a dictionary file) are made once per distinct settings.
     */
    private static final Map<List<String>, Settings> CACHE = new ConcurrentHashMap<>();
    private static final int CACHE_LIMIT = 32;

    /** Streams made by all codecs of this class loader (for tests and diagnostics). */
    static final AtomicLong OUTPUT_STREAMS = new AtomicLong();
    static final AtomicLong INPUT_STREAMS = new AtomicLong();

    private final Settings settings;

    /**
     * The codec configured by {@code conf}'s {@code spark.kompakt.*} settings (Spark calls this).
     *
     * @param conf Spark's configuration
     * @throws InvalidOptionException if a setting is invalid; the message starts with its key
     */
    public KompaktCompressionCodec(SparkConf conf) {
        List<String> key = Arrays.asList(
                conf.get(CODEC, null),
                conf.get(LEVEL, null),
                conf.get(BLOCK_SIZE, DEFAULT_BLOCK_SIZE),
                conf.get(THREADS, "1"),
                conf.get(DICTIONARY, null));
        Settings cached = CACHE.get(key);
        if (cached == null) {
            cached = Settings.of(conf, key);
            if (CACHE.size() >= CACHE_LIMIT) {
                CACHE.clear();
            }
            CACHE.put(key, cached);
        }
        this.settings = cached;
    }

    /**
     * The options the output streams compress with.
     *
     * @return the write options
     */
    public WriteOptions writeOptions() {
        return settings.write;
    }

    /**
     * The options the input streams decode with.
     *
     * @return the read options
     */
    public ReadOptions readOptions() {
        return settings.read;
    }

    /**
     * A {@link KompaktOutputStream} into {@code s}.
     *
     * @param s where the compressed bytes go
     * @return the stream
     * @throws UncheckedIOException if the stream cannot be made
     */
    @Override
    public OutputStream compressedOutputStream(OutputStream s) {
        try {
            OUTPUT_STREAMS.incrementAndGet();
            return new KompaktOutputStream(s, settings.write);
        } catch (KompaktException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * A {@link KompaktInputStream} over {@code s}, reading kompakt files that follow one another
     * as one stream.
     *
     * @param s the compressed bytes
     * @return the stream
     * @throws UncheckedIOException if the stream cannot be made
     */
    @Override
    public InputStream compressedInputStream(InputStream s) {
        try {
            INPUT_STREAMS.incrementAndGet();
            return KompaktInputStream.concatenated(s, settings.read);
        } catch (KompaktException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public String toString() {
        return "KompaktCompressionCodec[" + settings.write + "]";
    }

    /** Options made from one set of settings. */
    private static final class Settings {
        final WriteOptions write;
        final ReadOptions read;

        Settings(WriteOptions write, ReadOptions read) {
            this.write = write;
            this.read = read;
        }

        static Settings of(SparkConf conf, List<String> values) {
            String level = values.get(1);
            // lz4 is this codec's default only when nothing else is said: a level alone is a
            // unified level and a dictionary alone means zstd, by kompakt's own rules.
            String codec = values.get(0) != null ? values.get(0)
                    : level == null && values.get(4) == null ? DEFAULT_CODEC : null;
            String threadsText = values.get(3);
            String dictionaryPath = values.get(4);

            long blockSize;
            try {
                blockSize = conf.getSizeAsBytes(BLOCK_SIZE, DEFAULT_BLOCK_SIZE);
            } catch (RuntimeException e) {
                throw new InvalidOptionException(BLOCK_SIZE + ": invalid block size \"" + values.get(2)
                        + "\": bytes, or a size such as 64k or 1m", e);
            }
            int threads = parseInt(THREADS, "threads", threadsText);
            Integer levelValue = level == null ? null : parseInt(LEVEL, "level", level);

            Dictionary dictionary = null;
            if (dictionaryPath != null && !dictionaryPath.isEmpty()) {
                try {
                    dictionary = Dictionary.load(Paths.get(dictionaryPath));
                } catch (IOException | RuntimeException e) {
                    throw new InvalidOptionException(DICTIONARY + ": cannot load the dictionary \""
                            + dictionaryPath + "\": " + e.getMessage(), e);
                }
            }

            // Each setting alone first, so that an error names the key it comes from; the
            // rules and messages are kompakt's own.
            check(CODEC, () -> WriteOptions.builder().codec(codec).build());
            if (levelValue != null) {
                check(LEVEL, () -> WriteOptions.builder().codec(codec).level(levelValue).build());
            }
            check(BLOCK_SIZE, () -> WriteOptions.builder().blockSize(blockSize).build());
            check(THREADS, () -> WriteOptions.builder().threads(threads).build());
            WriteOptions.Builder b = WriteOptions.builder().codec(codec).blockSize(blockSize).threads(threads);
            if (levelValue != null) {
                b.level(levelValue);
            }
            if (dictionary != null) {
                b.dictionary(dictionary);
            }
            WriteOptions write = check(dictionary != null ? DICTIONARY : CODEC, b::build);
            ReadOptions.Builder r = ReadOptions.builder().threads(threads);
            if (dictionary != null) {
                // The read options use it for as long as the codec's settings are cached: never closed.
                r.dictionaries(dictionary);
            }
            return new Settings(write, r.build());
        }

        private static int parseInt(String key, String what, String text) {
            try {
                return Integer.parseInt(text.trim());
            } catch (NumberFormatException e) {
                throw new InvalidOptionException(key + ": invalid " + what + " \"" + text + "\": a whole number", e);
            }
        }

        private static WriteOptions check(String key, java.util.function.Supplier<WriteOptions> build) {
            try {
                return build.get();
            } catch (InvalidOptionException e) {
                throw new InvalidOptionException(key + ": " + e.getMessage(), e);
            }
        }
    }
}
