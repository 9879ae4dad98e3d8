// Agent test program whose main throws on its first line: the JVM dies of an uncaught exception
// before a profiler has sampled anything (no class beyond java.lang's is loaded first).
public class DiesAtOnce {
    public static void main(String[] args) {
        throw new IllegalStateException("deliberate, at once");
    }
}
