/* A shared library that is not an evalgraph plugin: it exports no entry symbol. */
int some_library_function(int x) { return x * 2; }
