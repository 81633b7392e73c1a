package dev.kompakt;

import java.lang.ref.SoftReference;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * A small recycling pool of {@code byte[]} for the streams, so that code which opens streams by
 * the thousand (Spark opens one per shuffle block and spill) does not allocate and zero their
 * buffers each time.
 *
 * <p>Arrays come in size classes, powers of two from 4 KiB to 64 MiB; {@link #acquire} returns
 * an array of at least the size asked for (its class's size), possibly holding old bytes.
 * The pool is bounded: at most {@value #SLOTS} arrays per class and {@link #maxBytes()} bytes in
 * all (system property {@value #MAX_BYTES_PROPERTY}, default 64 MiB; 0 turns pooling off); an
 * array returned when its class or the pool is full is left to the garbage collector. Pooled
 * arrays are held softly, so the collector can take them back under memory pressure.
 * Thread-safe and lock-free.
 */
final class BufferPool {
    /** System property: the most bytes the pool keeps. */
    static final String MAX_BYTES_PROPERTY = "kompakt.pool.maxBytes";

    /** Arrays kept per size class. */
    static final int SLOTS = 8;

    private static final int MIN_SHIFT = 12; // 4 KiB
    private static final int MAX_SHIFT = 26; // 64 MiB

    private static final long MAX_BYTES = maxBytesFromProperty();

    private static final AtomicReferenceArray<SoftReference<byte[]>>[] CLASSES = newClasses();
    private static final AtomicLong POOLED_BYTES = new AtomicLong();

    private BufferPool() {}

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static AtomicReferenceArray<SoftReference<byte[]>>[] newClasses() {
        AtomicReferenceArray<SoftReference<byte[]>>[] classes =
                new AtomicReferenceArray[MAX_SHIFT - MIN_SHIFT + 1];
        for (int i = 0; i < classes.length; i++) {
            classes[i] = new AtomicReferenceArray<>(SLOTS);
        }
        return classes;
    }

    private static long maxBytesFromProperty() {
        String text = System.getProperty(MAX_BYTES_PROPERTY);
        if (text == null) {
            return 64L << 20;
        }
        try {
            return Math.max(0, Long.parseLong(text.trim()));
        } catch (NumberFormatException e) {
            return 64L << 20;
        }
    }

    /** The most bytes the pool keeps. */
    static long maxBytes() {
        return MAX_BYTES;
    }

    /** Bytes the pool holds now (arrays the collector took back still count until reused). */
    static long pooledBytes() {
        return POOLED_BYTES.get();
    }

    /** Arrays the pool holds now. */
    static int pooledCount() {
        int n = 0;
        for (AtomicReferenceArray<SoftReference<byte[]>> slots : CLASSES) {
            for (int i = 0; i < slots.length(); i++) {
                if (slots.get(i) != null) {
                    n++;
                }
            }
        }
        return n;
    }

    /** The size class of {@code size} bytes, or -1 past the largest. */
    private static int classOf(int size) {
        if (size <= 1 << MIN_SHIFT) {
            return 0;
        }
        int shift = 32 - Integer.numberOfLeadingZeros(size - 1);
        return shift > MAX_SHIFT ? -1 : shift - MIN_SHIFT;
    }

    /**
     * An array of at least {@code size} bytes: a pooled one, or a new one of its class's size.
     *
     * @param size the least length, 0 or more
     */
    static byte[] acquire(int size) {
        int c = classOf(size);
        if (c < 0) {
            return new byte[size];
        }
        AtomicReferenceArray<SoftReference<byte[]>> slots = CLASSES[c];
        int classSize = 1 << (c + MIN_SHIFT);
        for (int i = 0; i < SLOTS; i++) {
            SoftReference<byte[]> ref = slots.get(i);
            if (ref != null && slots.compareAndSet(i, ref, null)) {
                POOLED_BYTES.addAndGet(-classSize);
                byte[] array = ref.get();
                if (array != null) {
                    return array;
                }
            }
        }
        return new byte[classSize];
    }

    /**
     * Gives an array back for reuse (the caller must not touch it afterwards). Arrays not made by
     * {@link #acquire} (of no class's exact size) and null are ignored.
     */
    static void release(byte[] array) {
        if (array == null || MAX_BYTES == 0) {
            return;
        }
        int size = array.length;
        int c = classOf(size);
        if (c < 0 || size != 1 << (c + MIN_SHIFT)) {
            return;
        }
        if (POOLED_BYTES.addAndGet(size) > MAX_BYTES) {
            POOLED_BYTES.addAndGet(-size);
            return;
        }
        AtomicReferenceArray<SoftReference<byte[]>> slots = CLASSES[c];
        SoftReference<byte[]> ref = new SoftReference<>(array);
        for (int i = 0; i < SLOTS; i++) {
            if (slots.get(i) == null && slots.compareAndSet(i, null, ref)) {
                return;
            }
        }
        POOLED_BYTES.addAndGet(-size);
    }
}
