<?php

use Illuminate\Database\Migrations\Migration;
use Illuminate\Database\Schema\Blueprint;
use Illuminate\Support\Facades\Schema;

// orders is sharded by user_id over the data sources and by id over the
// tables; the proxy generates id, which id() declares BIGINT UNSIGNED
// AUTO_INCREMENT.
return new class extends Migration {
    public function up()
    {
        Schema::create('orders', function (Blueprint $table) {
            $table->id();
            // Not foreignId('user_id')->constrained(): users is on the
            // default data source only, and a foreign key from a sharded
            // table to it is refused (1235) when its data nodes span
            // several data sources.
            $table->unsignedBigInteger('user_id')->index();
            $table->string('status', 16)->default('new');
            $table->decimal('amount', 10, 2)->default(0);
            $table->timestamps();
            $table->softDeletes();
            $table->index(['user_id', 'status']);
        });
    }

    public function down()
    {
        Schema::dropIfExists('orders');
    }
};
