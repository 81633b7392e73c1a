package dev.kompakt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Paths;
import org.junit.jupiter.api.Test;

/** Loading the JNI library: from the jar's resource (the build put it there), once. */
class NativeLibraryTest {
    @Test
    void theLibraryIsInsideTheJarAndLoads() throws Exception {
        assertEquals("linux-x86_64", NativeLibrary.platform(), "the machine this suite runs on");
        try (InputStream in = NativeLibrary.class.getResourceAsStream(NativeLibrary.resourceName())) {
            assertNotNull(in, "the build copies libkompakt_jni into the classes: " + NativeLibrary.resourceName());
        }
        assertFalse(Kompakt.version().isEmpty());
        String source = NativeLibrary.source();
        assertNotNull(source);
        if (System.getProperty(NativeLibrary.PATH_PROPERTY) == null && System.getenv(NativeLibrary.PATH_ENV) == null) {
            assertTrue(source.startsWith("jar:/dev/kompakt/native/linux-x86_64/libkompakt_jni.so via "), source);
            String tmp = source.substring(source.indexOf(" via ") + 5);
            assertFalse(Files.exists(Paths.get(tmp)), "the temporary copy is deleted once loaded: " + tmp);
        }
        NativeLibrary.load(); // again: nothing happens
        assertEquals(source, NativeLibrary.source());
    }

    @Test
    void concurrentFirstUseLoadsOnce() throws Exception {
        Thread[] threads = new Thread[4];
        Throwable[] errors = new Throwable[threads.length];
        for (int i = 0; i < threads.length; i++) {
            int k = i;
            threads[i] = new Thread(() -> {
                try {
                    NativeLibrary.load();
                    Kompakt.version();
                } catch (Throwable e) {
                    errors[k] = e;
                }
            });
            threads[i].start();
        }
        for (Thread t : threads) {
            t.join();
        }
        for (Throwable e : errors) {
            if (e != null) {
                throw new AssertionError(e);
            }
        }
    }
}
