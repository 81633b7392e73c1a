package dev.kompakt;

import static dev.kompakt.TestSupport.noise;
import static dev.kompakt.TestSupport.text;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ReadOnlyBufferException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Kompakt's one-shot methods: every codec, sizes around block edges, arrays and buffers. */
class RoundTripTest {
    static final String[] CODECS = {
        "none", "lz4", "lz4:8", "lz4hc", "lz4hc:9", "zstd", "zstd:3", "zstd:-5", "zstd:19", "gzip:6", "zlib:1",
        "auto", "0", "21", "60", "100"
    };

    static final int[] SIZES = {0, 1, 2, 100, 65_535, 65_536, 65_537, 200_003};

    static Stream<Arguments> codecsAndSizes() {
        return Arrays.stream(CODECS).flatMap(c -> Arrays.stream(SIZES).mapToObj(n -> Arguments.of(c, n)));
    }

    static WriteOptions options(String codec) {
        return WriteOptions.builder().codec(codec).blockSize(64 << 10).build();
    }

    @ParameterizedTest(name = "{0} {1} bytes")
    @MethodSource("codecsAndSizes")
    void byteArraysRoundTrip(String codec, int size) throws Exception {
        WriteOptions opts = options(codec);
        for (byte[] data : new byte[][] {text(size, size), noise(size, size)}) {
            byte[] packed = Kompakt.compress(data, opts);
            assertTrue(packed.length <= Kompakt.maxCompressedLength(size, opts), "bound");
            assertEquals(size, Kompakt.decompressedLength(packed));
            assertArrayEquals(data, Kompakt.decompress(packed));
        }
    }

    @Test
    void textShrinks() throws Exception {
        byte[] data = text(500_000, 1);
        for (String codec : new String[] {"lz4", "zstd:3", "gzip:6", "60"}) {
            byte[] packed = Kompakt.compress(data, options(codec));
            assertTrue(packed.length < data.length * 3 / 4, codec + ": " + packed.length);
        }
        assertTrue(Kompakt.compress(data, options("none")).length > data.length);
    }

    @Test
    void defaultsAndLevels() throws Exception {
        byte[] data = text(3_000_000, 2); // several 1 MiB blocks
        assertArrayEquals(data, Kompakt.decompress(Kompakt.compress(data)));
        WriteOptions zstd9 = WriteOptions.builder().codec("zstd").level(9).threads(2).build();
        assertArrayEquals(data, Kompakt.decompress(Kompakt.compress(data, zstd9)));
        WriteOptions unified = WriteOptions.builder().level(40).build();
        assertArrayEquals(data, Kompakt.decompress(Kompakt.compress(data, unified)));
        WriteOptions typed = WriteOptions.builder().codec("lz4").typesize(8).filter("delta").build();
        assertArrayEquals(data, Kompakt.decompress(Kompakt.compress(data, typed)));
        assertArrayEquals(data, Kompakt.decompress(Kompakt.compress(data, null), (ReadOptions) null));
    }

    @Test
    void outputDoesNotDependOnThreads() throws Exception {
        byte[] data = text(700_000, 3);
        WriteOptions one = WriteOptions.builder().codec("zstd:3").blockSize(64 << 10).threads(1).build();
        WriteOptions two = one.toBuilder().threads(2).build();
        assertArrayEquals(Kompakt.compress(data, one), Kompakt.compress(data, two));
    }

    @Test
    void rangesOfArrays() throws Exception {
        byte[] data = text(100_000, 4);
        byte[] packed = Kompakt.compress(data, 10, 50_000, null);
        assertArrayEquals(Arrays.copyOfRange(data, 10, 50_010), Kompakt.decompress(packed));
        byte[] padded = new byte[packed.length + 20];
        System.arraycopy(packed, 0, padded, 7, packed.length);
        assertArrayEquals(Arrays.copyOfRange(data, 10, 50_010),
                Kompakt.decompress(padded, 7, packed.length, ReadOptions.DEFAULT));
        assertThrows(IndexOutOfBoundsException.class, () -> Kompakt.compress(data, -1, 5, null));
        assertThrows(IndexOutOfBoundsException.class, () -> Kompakt.compress(data, 99_999, 5, null));
        assertThrows(IndexOutOfBoundsException.class, () -> Kompakt.decompress(padded, 7, padded.length, null));
        assertThrows(NullPointerException.class, () -> Kompakt.compress((byte[]) null));
        assertThrows(NullPointerException.class, () -> Kompakt.decompress((byte[]) null));
    }

    @ParameterizedTest(name = "src direct {0}, dst direct {1}")
    @MethodSource("bufferKinds")
    void byteBuffersRoundTrip(boolean srcDirect, boolean dstDirect) throws Exception {
        byte[] data = text(300_000, 5);
        WriteOptions opts = options("zstd:3");
        ByteBuffer src = buffer(srcDirect, data.length + 10);
        src.position(10);
        src.put(data);
        src.position(10);
        ByteBuffer packed = buffer(dstDirect, (int) Kompakt.maxCompressedLength(data.length, opts) + 5);
        packed.position(5);
        int n = Kompakt.compress(src, packed, opts);
        assertEquals(src.limit(), src.position());
        assertEquals(5 + n, packed.position());
        packed.flip().position(5);
        assertEquals(data.length, Kompakt.decompressedLength(packed));
        assertEquals(5, packed.position(), "decompressedLength does not move the position");

        ByteBuffer back = buffer(srcDirect, data.length + 3);
        back.position(3);
        assertEquals(data.length, Kompakt.decompress(packed, back, null));
        assertEquals(packed.limit(), packed.position());
        assertEquals(back.limit(), back.position());
        byte[] got = new byte[data.length];
        back.position(3);
        back.get(got);
        assertArrayEquals(data, got);
    }

    static Stream<Arguments> bufferKinds() {
        return Stream.of(Arguments.of(true, true), Arguments.of(false, false), Arguments.of(true, false),
                Arguments.of(false, true));
    }

    static ByteBuffer buffer(boolean direct, int capacity) {
        return direct ? ByteBuffer.allocateDirect(capacity) : ByteBuffer.allocate(capacity);
    }

    @ParameterizedTest(name = "direct {0}")
    @ValueSource(booleans = {true, false})
    void buffersThatAreTooSmallMoveNothing(boolean direct) throws Exception {
        byte[] data = noise(100_000, 6);
        ByteBuffer src = buffer(direct, data.length).put(data).flip();
        ByteBuffer small = buffer(direct, 1000);
        assertThrows(LimitExceededException.class, () -> Kompakt.compress(src, small, null));
        assertEquals(0, src.position());
        assertEquals(0, small.position());

        byte[] packed = Kompakt.compress(data);
        ByteBuffer psrc = buffer(direct, packed.length).put(packed).flip();
        LimitExceededException e =
                assertThrows(LimitExceededException.class, () -> Kompakt.decompress(psrc, small, null));
        assertEquals(ErrorKind.LIMIT, e.kind());
        assertEquals(0, psrc.position());
        assertThrows(ReadOnlyBufferException.class, () -> Kompakt.decompress(psrc, small.asReadOnlyBuffer(), null));
    }

    @Test
    void readOnlyAndSlicedSources() throws Exception {
        byte[] data = text(50_000, 7);
        ByteBuffer ro = ByteBuffer.wrap(data).asReadOnlyBuffer();
        ByteBuffer dst = ByteBuffer.allocate(60_000);
        int n = Kompakt.compress(ro, dst, null);
        ByteBuffer packed = ByteBuffer.allocateDirect(n).put(dst.array(), 0, n).flip();
        ByteBuffer out = ByteBuffer.allocate(data.length);
        Kompakt.decompress(packed.asReadOnlyBuffer(), out, null);
        assertArrayEquals(data, out.array());
        // A direct slice starts at its own address.
        ByteBuffer big = ByteBuffer.allocateDirect(n + 100);
        big.position(100);
        big.put(dst.array(), 0, n);
        big.position(100);
        ByteBuffer slice = big.slice();
        ByteBuffer out2 = ByteBuffer.allocateDirect(data.length);
        Kompakt.decompress(slice, out2, null);
        out2.flip();
        byte[] got = new byte[data.length];
        out2.get(got);
        assertArrayEquals(data, got);
    }

    @Test
    void limitsOnResults() throws Exception {
        byte[] data = text(100_000, 8);
        byte[] packed = Kompakt.compress(data);
        ReadOptions small = ReadOptions.builder().maxDecompressedLength(99_999).build();
        LimitExceededException e = assertThrows(LimitExceededException.class, () -> Kompakt.decompress(packed, small));
        assertTrue(e.getMessage().contains("100000"), e.getMessage());
        assertArrayEquals(data, Kompakt.decompress(packed, small.toBuilder().maxDecompressedLength(100_000).build()));
        assertThrows(InvalidOptionException.class, () -> ReadOptions.builder().maxDecompressedLength(-1));
        assertThrows(IllegalArgumentException.class, () -> Kompakt.maxCompressedLength(-1, null));
    }

    @Test
    void multiStreamFilesNeedKompaktFile(@TempDir Path dir) throws Exception {
        Path golden = TestSupport.goldenDir().resolve("v1/multi-stream-auto.kpk");
        byte[] file = Files.readAllBytes(golden);
        KompaktUsageException e = assertThrows(KompaktUsageException.class, () -> Kompakt.decompress(file));
        assertTrue(e.getMessage().contains("KompaktFile"), e.getMessage());
        assertEquals(ErrorKind.USAGE, e.kind());
    }

    @Test
    void readThreadsAreChecked() throws Exception {
        byte[] packed = Kompakt.compress(text(1000, 9));
        ReadOptions bad = ReadOptions.builder().threads(-1).build();
        InvalidOptionException e = assertThrows(InvalidOptionException.class, () -> Kompakt.decompress(packed, bad));
        assertTrue(e.getMessage().contains("invalid threads \"-1\""), e.getMessage());
        assertEquals(ErrorKind.OPTION, e.kind());
        assertArrayEquals(text(1000, 9),
                Kompakt.decompress(packed, ReadOptions.builder().threads(2).build()));
    }

    @Test
    void optionsDescribeThemselves() {
        String d = WriteOptions.DEFAULT.toString();
        assertTrue(d.contains("1024 KiB blocks"), d);
        String s = WriteOptions.builder().codec("zstd:3").blockSize(64 << 10).threads(1).build().toString();
        assertTrue(s.contains("zstd") && s.contains("64 KiB"), s);
        assertEquals(64 << 10, options("lz4").blockSize());
        assertEquals(1 << 20, WriteOptions.builder().codec("lz4").build().blockSize());
        assertEquals(WriteOptions.DEFAULT.blockSize(), WriteOptions.builder().codec("lz4").build().blockSize());
        assertEquals(0, WriteOptions.DEFAULT.threads());
        assertNotNull(ReadOptions.DEFAULT.toString());
    }

    @Test
    void versionAndKinds() {
        assertTrue(Kompakt.version().matches("\\d+\\.\\d+\\.\\d+.*"), Kompakt.version());
        for (ErrorKind k : ErrorKind.values()) {
            assertEquals(k, ErrorKind.fromId(k.id()));
        }
        assertEquals("corrupt", ErrorKind.CORRUPT.id());
        assertThrows(IllegalArgumentException.class, () -> ErrorKind.fromId("nope"));
    }
}
