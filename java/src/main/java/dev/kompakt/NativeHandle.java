package dev.kompakt;

import java.lang.ref.Cleaner;
import java.util.function.LongConsumer;

/**
 * One Rust object held by a Java object: its {@code long} handle, freed exactly once, never
 * while a call uses it.
 *
 * <p>Every native call brackets its use with {@link #acquire()} and {@link #release()}. Closing
 * ({@link #close()}, or the {@link Cleaner} when the owner became unreachable without being
 * closed) marks the handle closed at once, so later calls get a {@link KompaktUsageException};
 * it is freed when the last call that uses it returns. The Cleaner is only a safety net: owners
 * are closed explicitly, except {@link WriteOptions}, whose handles live as long as the options.
 */
final class NativeHandle {
    private static final Cleaner CLEANER = Cleaner.create();

    private final State state;
    private final Cleaner.Cleanable cleanable;

    /**
     * Takes ownership of {@code handle} (not 0) for {@code owner}.
     *
     * @param owner the Java object whose unreachability frees the handle
     * @param handle the Rust object
     * @param free the Native method that frees it (a static method: it must not hold the owner)
     * @param what the object's name in messages: "stream", "file", "dictionary"
     */
    NativeHandle(Object owner, long handle, LongConsumer free, String what) {
        this.state = new State(handle, free, what);
        this.cleanable = CLEANER.register(owner, state);
    }

    /**
     * The handle, counted as in use until {@link #release()}.
     *
     * @throws KompaktUsageException if it is closed
     */
    long acquire() throws KompaktUsageException {
        return state.acquire();
    }

    /** Ends a use that {@link #acquire()} began. */
    void release() {
        state.release();
    }

    /** Closes the handle (idempotent); it is freed now, or when its last use ends. */
    void close() {
        cleanable.clean();
    }

    boolean isClosed() {
        return state.isClosed();
    }

    /** The Cleaner's action: holds only the handle and its free function, never the owner. */
    private static final class State implements Runnable {
        private final LongConsumer free;
        private final String what;
        private long handle;
        private int users;
        private boolean closed;

        State(long handle, LongConsumer free, String what) {
            this.handle = handle;
            this.free = free;
            this.what = what;
        }

        synchronized long acquire() throws KompaktUsageException {
            if (closed) {
                throw new KompaktUsageException("the " + what + " is closed");
            }
            users++;
            return handle;
        }

        void release() {
            long toFree = 0;
            synchronized (this) {
                users--;
                if (users == 0 && closed) {
                    toFree = handle;
                    handle = 0;
                }
            }
            if (toFree != 0) {
                free.accept(toFree);
            }
        }

        synchronized boolean isClosed() {
            return closed;
        }

        @Override
        public void run() {
            long toFree = 0;
            synchronized (this) {
                closed = true;
                if (users == 0) {
                    toFree = handle;
                    handle = 0;
                }
            }
            if (toFree != 0) {
                free.accept(toFree);
            }
        }
    }
}
