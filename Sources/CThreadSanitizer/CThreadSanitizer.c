// The annotations are inline functions in the header; SwiftPM needs a source file for a C target.
#include "CThreadSanitizer.h"
