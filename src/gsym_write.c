#include "gsym_write.h"
