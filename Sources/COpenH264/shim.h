#include <wels/codec_api.h>
#include <wels/codec_app_def.h>
#include <wels/codec_def.h>
