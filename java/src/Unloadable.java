// A class that UnloadClasses.java loads through a throw-away class loader, so that it can be
// unloaded while the program runs.

public class Unloadable {
    public final long[] payload = new long[4];
}
