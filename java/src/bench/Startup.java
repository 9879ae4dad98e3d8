// Benchmark program for start-up costs: does nothing but print one line, so its wall time is
// the JVM's start and exit (and an agent's).

package bench;

public class Startup {
    public static void main(String[] args) {
        System.out.println("started");
    }
}
