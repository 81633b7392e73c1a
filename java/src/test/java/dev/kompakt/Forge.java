package dev.kompakt;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import net.openhft.hashing.LongHashFunction;

/**
 * Writes kompakt files byte by byte after docs/FORMAT.md, with whatever a block claims: a
 * consistent file (every checksum and the index agree with the block) whose block may lie.
 */
final class Forge {
    private Forge() {}

    static final int TAG_BLOCK = 0xB1;
    static final int MAX_RAW_LEN = 64 << 20;

    static long xxh3(byte[] b, int off, int len) {
        return LongHashFunction.xx3().hashBytes(b, off, len);
    }

    static ByteBuffer le(int size) {
        return ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** The 16-byte file header of a format major version. */
    static byte[] fileHeader(int major) {
        ByteBuffer h = le(16);
        h.put(new byte[] {'K', 'M', 'P', 'K'}).putShort((short) major).putShort((short) 0).putInt(0);
        h.putInt((int) xxh3(h.array(), 0, 12));
        return h.array();
    }

    /** One block with a lying header: codec, filters, typesize, raw_len as given, checksum right. */
    static byte[] block(int codec, int filters, int typesize, int rawLen, byte[] payload) {
        ByteBuffer h = le(24 + payload.length);
        h.put((byte) TAG_BLOCK).put((byte) codec).put((byte) filters).put((byte) typesize);
        h.putInt(0).putInt(rawLen).putInt(payload.length);
        byte[] forChecksum = new byte[16 + payload.length];
        System.arraycopy(h.array(), 0, forChecksum, 0, 16);
        System.arraycopy(payload, 0, forChecksum, 16, payload.length);
        h.putLong(xxh3(forChecksum, 0, forChecksum.length));
        h.put(payload);
        return h.array();
    }

    /** A whole single-stream, single-block file with a consistent index and trailer. */
    static byte[] file(int major, int codec, int filters, int typesize, int rawLen, byte[] payload) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(fileHeader(major));
        out.writeBytes(block(codec, filters, typesize, rawLen, payload));
        int footerOffset = out.size();
        ByteBuffer body = le(24 + 16 + 32);
        body.putInt(1).putInt(0).putLong(1);
        body.putLong(Integer.toUnsignedLong(rawLen)).putLong(1);
        body.putLong(16).putLong(0).putInt(0).putInt(rawLen).putInt(payload.length);
        body.put((byte) codec).put((byte) filters).put((byte) typesize).put((byte) 0);
        body.putLong(0); // metadata_len
        ByteBuffer footer = le(16 + body.capacity());
        footer.put((byte) 0xF0).put(new byte[7]).putLong(body.capacity()).put(body.array());
        out.writeBytes(footer.array());
        ByteBuffer trailer = le(32);
        trailer.putLong(footerOffset).putLong(footer.capacity()).putLong(xxh3(footer.array(), 0, footer.capacity()));
        trailer.putInt((int) xxh3(trailer.array(), 0, 24));
        trailer.put(new byte[] {'K', 'M', 'P', 'K'});
        out.writeBytes(trailer.array());
        return out.toByteArray();
    }
}
