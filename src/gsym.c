#include "gsym.h"
