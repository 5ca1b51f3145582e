"""The client: settings (`config`), the connection (`connect`, `chat`), accounting, replay cassettes,
the live request cache and the sampling of each role. The local server it talks to by default is
started by `course_runtime`, which passes its starter in (`reflect.connect`): this layer never imports it."""
