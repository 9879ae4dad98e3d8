package net.jpountz.lz4;

/** Stands in for lz4-java (not reachable here): our recordings are never LZ4-compressed. */
public class LZ4FrameInputStream extends java.io.FilterInputStream {
    public LZ4FrameInputStream(java.io.InputStream in) throws java.io.IOException {
        super(in);
        throw new java.io.IOException("LZ4 is not supported in this build");
    }
}
